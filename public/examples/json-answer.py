"""The JSON answer: the statistics and the image, base64-encoded, in one body.
Accept: application/json asks for it (response=json in the query does too).

Usage: python3 json-answer.py photo.jpg [out]    (pip install requests)
"""
import base64
import json
import os
import sys

import requests

base = os.environ.get("IMGEDGE_URL", "http://127.0.0.1:8787")
with open(sys.argv[1], "rb") as f:
    res = requests.post(
        f"{base}/api/compress",
        params={"format": "webp", "width": 320},
        headers={"Accept": "application/json", "Content-Type": "application/octet-stream"},
        data=f,
    )
answer = res.json()
if not res.ok:
    sys.exit(f"{res.status_code} {answer['code']}: {answer['detail']}")

image = answer.pop("image")
print(json.dumps(answer, indent=2))
# The answer's filename has the input's stem: .imgedge keeps it from overwriting the input.
stem, extension = os.path.splitext(answer["filename"])
target = sys.argv[2] if len(sys.argv) > 2 else f"{stem}.imgedge{extension}"
with open(target, "wb") as f:
    f.write(base64.b64decode(image))
print(f"wrote {target}")
