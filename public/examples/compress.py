"""Compress an image to WebP at quality 75, scaled down to 320 px wide, and print what the server reports.

Usage: python3 compress.py photo.jpg [out.webp]    (pip install requests)
"""
import os
import sys

import requests

base = os.environ.get("IMGEDGE_URL", "http://127.0.0.1:8787")
source = sys.argv[1]
# The default output name is never the input's (photo.webp in gives photo.imgedge.webp out, not an overwrite).
target = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(source)[0] + ".imgedge.webp"

with open(source, "rb") as f:
    res = requests.post(
        f"{base}/api/compress",
        params={"format": "webp", "quality": 75, "width": 320},
        headers={"Content-Type": "application/octet-stream"},
        data=f,
    )
if not res.ok:
    # Errors are application/problem+json with a stable `code`.
    problem = res.json()
    sys.exit(f"{res.status_code} {problem['code']}: {problem['detail']}")

with open(target, "wb") as f:
    f.write(res.content)
h = res.headers
print(f"{h['X-Input-Format']} {h['X-Input-Width']}x{h['X-Input-Height']}, {h['X-Input-Size']} bytes")
print(f"-> {h['X-Output-Format']} {h['X-Output-Width']}x{h['X-Output-Height']}, {h['X-Output-Size']} bytes")
print(f"ratio {h['X-Compression-Ratio']}; {h['Server-Timing']}")
# An unlimited policy is not counted, and its answers carry no rate-limit headers.
if "X-RateLimit-Limit" in h:
    print(f"rate limit: {h['X-RateLimit-Remaining']} of {h['X-RateLimit-Limit']} calls left")
else:
    print("rate limit: not counted")
print(f"wrote {target}")
