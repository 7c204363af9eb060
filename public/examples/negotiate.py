"""format=auto: the server picks AVIF or WebP from the Accept header, as it would for a browser, and
otherwise keeps the input's family. The answer carries Vary: Accept, so caches keep one copy per Accept.

Usage: python3 negotiate.py photo.jpg    (pip install requests)
"""
import os
import sys

import requests

base = os.environ.get("IMGEDGE_URL", "http://127.0.0.1:8787")
with open(sys.argv[1], "rb") as f:
    image = f.read()

for accept in ["image/avif,image/webp,*/*", "image/webp,*/*", "*/*"]:
    res = requests.post(
        f"{base}/api/compress",
        params={"format": "auto", "width": 320},
        headers={"Accept": accept, "Content-Type": "application/octet-stream"},
        data=image,
    )
    res.raise_for_status()
    print(f"Accept: {accept} -> {res.headers['Content-Type']}, {len(res.content)} bytes, Vary: {res.headers.get('Vary')}")
