"""Sign imgedge GET /img URLs from Python (3.8+, standard library only): the same HMAC-SHA256 of the same path as
signers/js/imgedge-sign.mjs, which the worker checks with.

    from imgedge_sign import image_url
    image_url("https://images.example.com", {"width": 800, "format": "auto"}, "photos/cat.jpg", secret=key)
    # 'https://images.example.com/img/width=800,format=auto/photos/cat.jpg?sig=...'

    python3 imgedge_sign.py '/img/width=800/photos/cat.jpg' [--expires-in 3600]   # key from SIGNING_KEY
"""

import base64
import hashlib
import hmac
import os
import re
import sys
import time
from urllib.parse import quote

# What a URL parser percent-encodes in a path (the URL Standard's path percent-encode set), besides non-ASCII; ^ as
# newer parsers do (older ones keep it, and %5E reads the same to both).
_ENCODED = set(' "<>^`{}\x7f') | {chr(c) for c in range(0x20)}
_DOT = re.compile(r"^(\.|%2e)$", re.IGNORECASE)
_DOT_DOT = re.compile(r"^(\.|%2e)(\.|%2e)$", re.IGNORECASE)


def requested_path(path):
    """The path as the worker sees it: spaces and non-ASCII percent-encoded, `.` and `..` segments resolved."""
    if "?" in path or "#" in path:
        raise ValueError(f"a /img path has no ? or #: {path}")
    text = re.sub(r"[\t\n\r]", "", path.strip("".join(chr(c) for c in range(0x21)))).replace("\\", "/")
    encoded = "".join(quote(ch, safe="") if ch in _ENCODED or ord(ch) > 0x7F else ch for ch in text)
    segments = []
    parts = (encoded[1:] if encoded.startswith("/") else encoded).split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if _DOT_DOT.match(part):
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif _DOT.match(part):
            if last:
                segments.append("")
        else:
            segments.append(part)
    return "/" + "/".join(segments)


def sign_path(path, secret, exp=None):
    """The path as requested with its `sig` (and `exp`, a Unix time, when given)."""
    requested = requested_path(path)
    message = requested if exp is None else f"{requested}?exp={exp}"
    digest = hmac.new(secret.encode(), message.encode(), hashlib.sha256).digest()
    sig = base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return f"{requested}?sig={sig}" if exp is None else f"{requested}?exp={exp}&sig={sig}"


def image_path(options, source):
    """`/img/<options>/<source>`: options a dict (values percent-encoded) or a ready `name=value,...` string."""
    text = options if isinstance(options, str) else ",".join(f"{name}={quote(_text(value), safe='')}" for name, value in options.items())
    return f"/img/{text or '_'}/" + "/".join(quote(part, safe="") for part in source.lstrip("/").split("/"))


def image_url(base, options, source, secret=None, exp=None, expires_in=None):
    """A whole /img URL on `base`, signed when `secret` is given, expiring at `exp` or `expires_in` seconds from now."""
    path = image_path(options, source)
    if exp is None and expires_in is not None:
        exp = int(time.time()) + expires_in
    return base.rstrip("/") + (requested_path(path) if secret is None else sign_path(path, secret, exp))


def _text(value):
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


if __name__ == "__main__":
    args = sys.argv[1:]
    expires_in = None
    if "--expires-in" in args:
        at = args.index("--expires-in")
        expires_in = int(args[at + 1])
        del args[at : at + 2]
    key = os.environ.get("SIGNING_KEY")
    if not key or len(args) != 1 or not args[0].startswith("/img/"):
        sys.exit("usage: SIGNING_KEY=... python3 imgedge_sign.py '/img/<options>/<source>' [--expires-in SECONDS]")
    print(sign_path(args[0], key, None if expires_in is None else int(time.time()) + expires_in))
