"""HTTP layer: routes, error shapes, the page."""
import json
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from .schemas import EventIn, Invalid, RegistrationIn, event_out, registration_out, validate
from .service import Conflict, Store

WEB = Path(__file__).resolve().parent.parent / "web"
MAX_ID = 2147483647


class NotFound(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def as_id(raw: str, what: str) -> int:
    """Path ids: anything that is not a positive int4 cannot exist -> 404."""
    if raw.isascii() and raw.isdigit() and 0 < int(raw) <= MAX_ID:
        return int(raw)
    raise NotFound(f"{what} not found")


def nesting_depth(value):
    """How deeply objects and arrays nest (iterative; spec: deeper than 32 levels gets 422)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


async def json_body(request: Request):
    raw = await request.body()
    if len(raw) > 1_048_576:
        return None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # includes UnicodeDecodeError and empty bodies
        return None
    return None if nesting_depth(body) > 32 else body


def create_app(store: Store) -> FastAPI:
    app = FastAPI(title="Event registration", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(Invalid)
    async def _invalid(_req, exc: Invalid):
        return JSONResponse({"error": "validation_error", "message": exc.message, "fields": exc.fields}, 422)

    @app.exception_handler(NotFound)
    async def _not_found(_req, exc: NotFound):
        return JSONResponse({"error": "not_found", "message": exc.message}, 404)

    @app.exception_handler(Conflict)
    async def _conflict(_req, exc: Conflict):
        return JSONResponse({"error": exc.code, "message": exc.message}, 409)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req, exc: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse({"error": code, "message": str(exc.detail)}, exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.get("/health")
    def health():
        return {"status": "ok"}

    @app.get("/", include_in_schema=False)
    def page():
        return FileResponse(WEB / "index.html", media_type="text/html")

    @app.get("/assets/{name}", include_in_schema=False)
    def asset(name: str):
        files = {"page.js": "text/javascript", "page.css": "text/css"}
        if name not in files:
            raise NotFound("asset not found")
        return FileResponse(WEB / name, media_type=files[name])

    @app.get("/api/events")
    def list_events():
        return {"items": [event_out(r) for r in store.list_events()]}

    @app.post("/api/events", status_code=201)
    async def create_event(request: Request):
        data = validate(EventIn, await json_body(request))
        row = await _run(store.create_event, data)
        return JSONResponse(event_out(row), 201)

    @app.get("/api/events/{event_id}")
    def get_event(event_id: str):
        row = store.get_event(as_id(event_id, "event"))
        if row is None:
            raise NotFound("event not found")
        return event_out(row)

    @app.get("/api/events/{event_id}/registrations")
    def list_registrations(event_id: str):
        rows = store.list_registrations(as_id(event_id, "event"))
        if rows is None:
            raise NotFound("event not found")
        return {"items": [registration_out(r) for r in rows]}

    @app.post("/api/events/{event_id}/registrations", status_code=201)
    async def register(event_id: str, request: Request):
        # Decision: the body is validated first (422 before 404 for an unknown event).
        data = validate(RegistrationIn, await json_body(request))
        row = await _run(store.register, as_id(event_id, "event"), data)
        if row is None:
            raise NotFound("event not found")
        return JSONResponse(registration_out(row), 201)

    @app.delete("/api/registrations/{registration_id}", status_code=204)
    def cancel(registration_id: str):
        if not store.cancel(as_id(registration_id, "registration")):
            raise NotFound("registration not found")
        return Response(status_code=204)

    return app


async def _run(fn, *args):
    """Run blocking database work off the event loop."""
    from starlette.concurrency import run_in_threadpool
    return await run_in_threadpool(fn, *args)
