"""Maps and token portraits: the GM's uploads, checked and stored in the database, served by content hash.

- ``POST /t/<slug>/images`` (the GM only): the request body is the image itself, with its type as the
  ``Content-Type`` (``image/png``, ``image/jpeg`` or ``image/webp``). The GM's session cookie (as for
  the GM page) and the header ``X-Battleboard-Key`` with the GM key the GM page carries must both be
  there (a form or a script on another site can send neither the header nor, cross-site, a same-origin
  ``Origin``), and a browser's ``Origin`` must be this site. At most :data:`MAX_BYTES` and
  :data:`MAX_PIXELS`. Pillow decodes the whole image: anything that is not a complete image of the type
  it claims is refused; it is then re-encoded from its pixels alone (no EXIF, comments, colour
  profiles or other metadata; turned upright first if EXIF said so) and stored. Answer:
  ``{"ok": true, "image": {"sha256", "url", "type", "width", "height"}}``, or ``{"ok": false, "error"}``
  with 400, 403, 413 or 415 — nothing stored.
- ``GET /img/<sha256>.<ext>``: the stored image, ``Cache-Control: public, max-age=31536000, immutable``
  (its address changes whenever its content does).

The table's board settings (the map under the grid, the tokens' colours and portraits, blocked
squares) are set with the GM's ``board_set`` socket event (:meth:`webapp.service.BattleService.set_board`)
and reach every viewer as ``board`` in the table payload (:func:`board_payload`).
"""

from __future__ import annotations

import hashlib
import io
import re
import secrets
import threading
import warnings
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, jsonify, request, session
from werkzeug.exceptions import RequestEntityTooLarge

from rules import RulesError

from .desk import Desk
from .fog import sight_of
from .models import StoredImage, utcnow
from .security import BODY_LIMITS, limits

bp = Blueprint("assets", __name__)

#: the largest upload, in bytes (10 MB)
MAX_BYTES = 10 * 1024 * 1024
#: the largest image, in pixels once decoded (16 megapixels: a 4096 × 4096 map, 100 pixels a square
#: for a 40 × 40 grid, or a 4K screen's 8.3 with room; bounded by pixels, not bytes, as a small
#: compressed file can hold a huge picture)
MAX_PIXELS = 4096 * 4096
MEGAPIXELS = MAX_PIXELS // 1_000_000
#: how long an upload waits for the one decoder of its process before it is answered "busy" (seconds)
DECODE_WAIT = 20.0
#: one decode at a time per process: each one holds the whole picture in memory, several times over
_decoder = threading.Lock()
#: accepted types: content type -> (Pillow's format name, file extension)
TYPES = {"image/png": ("PNG", "png"), "image/jpeg": ("JPEG", "jpg"), "image/webp": ("WEBP", "webp")}
EXTENSIONS = {ext: ctype for ctype, (_, ext) in TYPES.items()}
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
# the CSRF check looks at the body before the route does: let it through, the route answers its size
BODY_LIMITS["assets.upload"] = MAX_BYTES + 1024 * 1024
CACHE_FOREVER = "public, max-age=31536000, immutable"


class UploadRefused(Exception):
    """An upload that is not stored, with its HTTP status and a message for the GM."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def image_url(sha256: str, content_type: str) -> str:
    return f"/img/{sha256}.{TYPES[content_type][1]}"


def check_image(data: bytes, declared: str) -> tuple[bytes, str, int, int]:
    """Decode an upload with Pillow and re-encode its pixels: ``(bytes, content type, width, height)``.

    Refuses (:class:`UploadRefused`) a type other than PNG, JPEG or WebP, content that is not the type
    it is declared as, more than :data:`MAX_BYTES` or :data:`MAX_PIXELS`, a decompression bomb, and a
    file that does not decode completely."""
    from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

    if declared not in TYPES:
        raise UploadRefused("upload a PNG, JPEG or WebP image", 415)
    if not data:
        raise UploadRefused("the upload is empty")
    if len(data) > MAX_BYTES:
        raise UploadRefused(f"the image is larger than {MAX_BYTES // (1024 * 1024)} MB", 413)
    fmt, _ext = TYPES[declared]
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=list({f for f, _ in TYPES.values()})) as img:
                if img.format != fmt:
                    raise UploadRefused(f"the file is a {img.format} image, not the {fmt} it claims to be", 415)
                width, height = img.size
                if width < 1 or height < 1:
                    raise UploadRefused("the image has no pixels")
                if width * height > MAX_PIXELS:
                    raise UploadRefused(f"the image has {width} × {height} pixels: at most {MEGAPIXELS} megapixels "
                                        "(4096 × 4096); make it smaller and upload it again", 413)
                img.load()  # decodes every pixel of the first frame: a truncated file fails here
                ImageOps.exif_transpose(img, in_place=True)  # turned upright if EXIF said so, with no copy
                pixels: Image.Image = img
    except UploadRefused:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise UploadRefused(f"the image is too large once decoded (at most {MEGAPIXELS} megapixels)", 413) from None
    except UnidentifiedImageError:
        raise UploadRefused(f"the file is not a {fmt} image", 415) from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise UploadRefused(f"the image could not be read completely ({exc.__class__.__name__}): is it truncated?") from None
    out = io.BytesIO()
    if fmt == "JPEG":
        if pixels.mode not in ("RGB", "L"):
            pixels = pixels.convert("RGB")
        pixels.save(out, "JPEG", quality=90)
    elif fmt == "PNG":
        if pixels.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
            pixels = pixels.convert("RGBA")
        pixels.info = {}  # no text chunks, no colour profile
        pixels.save(out, "PNG")
    else:
        if pixels.mode not in ("RGB", "RGBA"):
            pixels = pixels.convert("RGBA")
        pixels.save(out, "WEBP", quality=90)
    width, height = pixels.size
    return out.getvalue(), declared, width, height


def store_image(table_id: int | None, data: bytes, content_type: str, width: int, height: int) -> StoredImage:
    """Keep a checked image (once: the same pixels uploaded twice are one row)."""
    from sqlalchemy.exc import IntegrityError
    from sqlmodel import select

    digest = hashlib.sha256(data).hexdigest()
    service: Desk = current_app.extensions["battleboard"].service
    with service.session() as s:
        found = s.exec(select(StoredImage).where(StoredImage.sha256 == digest)).first()
        if found is not None:
            found.created_at = utcnow()  # uploaded again: new, so not pruned before the GM uses it
            s.add(found)
            s.commit()
            s.refresh(found)
            return found
        row = StoredImage(sha256=digest, content_type=content_type, width=width, height=height, size=len(data),
                          data=data, table_id=table_id)
        s.add(row)
        try:
            s.commit()
        except IntegrityError:  # the same image stored by another request just now
            s.rollback()
            found = s.exec(select(StoredImage).where(StoredImage.sha256 == digest)).first()
            assert found is not None
            return found
        s.refresh(row)
        return row


def _same_origin() -> bool:
    """A browser's Origin (or, without one, its Referer) names this site; no header at all is a
    script's request, which still needs the GM's key and cookie."""
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    if not origin:
        return True
    parts = urlsplit(origin)
    seen = f"{parts.scheme}://{parts.netloc}"
    ours = {request.host_url.rstrip("/")}
    public = current_app.config["BATTLEBOARD"].public_url  # the address players use, behind a proxy
    if public:
        mine = urlsplit(public)
        ours.add(f"{mine.scheme}://{mine.netloc}")
    return seen in ours


def _refuse(message: str, status: int) -> tuple[Response, int]:
    return jsonify({"ok": False, "error": message}), status


@bp.post("/t/<slug>/images")
def upload(slug: str) -> Any:
    hub = current_app.extensions["battleboard"]
    try:
        table = hub.service.table(slug=slug[:32])
    except RulesError:
        return _refuse("no such table", 404)
    remembered = (session.get("gm") or {}).get(table.slug)
    key = request.headers.get("X-Battleboard-Key", "")
    if not (isinstance(remembered, str) and secrets.compare_digest(remembered, table.gm_token)
            and secrets.compare_digest(key, table.gm_token)):
        return _refuse("only the GM of this table may upload images (open the GM page first)", 403)
    if not _same_origin():
        return _refuse("uploads are accepted only from this board's own pages", 403)
    length = request.content_length  # None: sent in chunks, counted as it is read
    if length is not None and length > MAX_BYTES:
        return _refuse(f"the image is larger than {MAX_BYTES // (1024 * 1024)} MB", 413)
    request.max_content_length = MAX_BYTES  # this route only: the app's limit stays at 256 KiB
    try:
        data = request.get_data(cache=False)
    except RequestEntityTooLarge:
        return _refuse(f"the image is larger than {MAX_BYTES // (1024 * 1024)} MB", 413)
    if not limits().hit("uploads", f"table:{table.id}"):
        return _refuse("too many uploads for this table just now: wait a minute and try again", 429)
    # one decode at a time in this process (the header's size is checked before any pixel is read)
    if not _decoder.acquire(timeout=DECODE_WAIT):
        return _refuse("the board is busy reading other images: try again in a moment", 503)
    try:
        pixels, ctype, width, height = check_image(data, request.mimetype)
    except UploadRefused as exc:
        return _refuse(str(exc), exc.status)
    finally:
        _decoder.release()
    row = store_image(table.id, pixels, ctype, width, height)
    hub.service.prune_unused_images()  # the earlier uploads no board or roster took
    return jsonify({"ok": True, "image": {"sha256": row.sha256, "url": image_url(row.sha256, row.content_type),
                                          "type": row.content_type, "width": row.width, "height": row.height}})


@bp.get("/img/<name>")
def serve(name: str) -> Any:
    from sqlmodel import select

    digest, _, ext = name.partition(".")
    if not SHA256_RE.match(digest) or ext not in EXTENSIONS:
        return Response("no such image", status=404, mimetype="text/plain")
    if request.headers.get("If-None-Match") == f'"{digest}"':
        response = Response(status=304)
        response.headers["Cache-Control"] = CACHE_FOREVER
        response.headers["ETag"] = f'"{digest}"'
        return response
    service = current_app.extensions["battleboard"].service
    with service.session() as s:
        row = s.exec(select(StoredImage).where(StoredImage.sha256 == digest)).first()
        if row is None or EXTENSIONS[ext] != row.content_type:
            return Response("no such image", status=404, mimetype="text/plain")
        data, ctype = bytes(row.data), row.content_type
    response = Response(data, mimetype=ctype)
    response.headers["Cache-Control"] = CACHE_FOREVER
    response.headers["ETag"] = f'"{digest}"'
    return response


def board_payload(stored: Any, hidden: Iterable[str] = ()) -> dict[str, Any]:
    """The board every viewer of a table gets (contracts §1): the map with its address, each token's
    colour and portrait address (but the ``hidden`` combatants': rules/hiding.py), the blocked squares,
    the fogged squares and the sight (every page draws the fog: dark on the TV and the phones, dimmed
    on the GM's console; what stands in it is kept out of the battle payloads, :func:`webapp.fog.hide_fogged`)."""
    board = stored if isinstance(stored, dict) else {}
    out: dict[str, Any] = {"map": None, "tokens": {}, "blocked": list(board.get("blocked") or []),
                           "fog": list(board.get("fog") or []), "sight": sight_of(board)}
    m = board.get("map")
    if isinstance(m, dict) and m.get("image") and m.get("type") in TYPES:
        out["map"] = {"url": image_url(m["image"], m["type"]), "width": m["width"], "height": m["height"],
                      "squares_across": m["squares_across"], "offset_x": m["offset_x"], "offset_y": m["offset_y"]}
    left_out = set(hidden)
    for cid, look in (board.get("tokens") or {}).items():
        if cid in left_out:
            continue
        portrait = look.get("portrait")
        out["tokens"][cid] = {
            "colour": look.get("colour"),
            "portrait": image_url(portrait["image"], portrait["type"]) if isinstance(portrait, dict) else None,
        }
    return out
