"""The real parts the tests run against: `mt serve` (the compiled CLI, on PostgreSQL or PGlite), the orders
API upstream its tools call, and a TCP proxy that can cut connections or drop an answer."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[3]
MT = ROOT / "packages" / "cli" / "bin" / "mt.js"
PG_URL = os.environ.get("MT_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


# --- The orders API the tools call -------------------------------------------------------------------------


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: str


@dataclass
class Upstream:
    """A real HTTP server on 127.0.0.1: GET /orders/{id} and POST /orders/{id}/refund; it records every request."""

    shop_key: str
    requests: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def refunds(self, since: int = 0) -> list[dict[str, Any]]:
        """The bodies of the refunds received after the first `since` requests."""
        return [json.loads(r.body) for r in self.requests[since:] if r.method == "POST" and r.path.endswith("/refund")]

    def start(self) -> Upstream:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _answer(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                headers = {k.lower(): v for k, v in self.headers.items()}
                upstream.requests.append(Seen(self.command, self.path, headers, body))
                if headers.get("x-api-key") != upstream.shop_key:
                    return self._answer(401, {"error": "bad key"})
                match = re.fullmatch(r"/orders/([^/?]+)(/refund)?(\?.*)?", self.path)
                if not match:
                    return self._answer(404, {"error": "no such route"})
                if match.group(2):
                    return self._answer(200, {"orderId": match.group(1), "refunded": json.loads(body)["amount"]})
                return self._answer(200, {"id": match.group(1), "item": "Glass kettle", "paid": 49.9})

            do_GET = _handle
            do_POST = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


# --- The config repo the tests deploy, and the scripted model's turns ------------------------------------

GET_ORDER = {"toolCalls": [{"name": "get-order", "arguments": {"additionalInputs": {"path.orderId": "A-1001"}}}]}


def refund(amount: float) -> dict[str, Any]:
    call = {"request": {"amount": amount, "reason": "cracked lid"}, "additionalInputs": {"path.orderId": "A-1001"}}
    return {"toolCalls": [{"name": "refund-order", "arguments": call}]}


SCRIPTS: dict[str, list[dict[str, Any]]] = {
    # One approval: the refund of 15.
    "approve-flow": [GET_ORDER, refund(15), {"text": "Refunded 15.00 EUR."}],
    # The full refund, rejected, then a redraft of 15.
    "redraft-flow": [GET_ORDER, refund(49.9), refund(15), {"text": "Refunded 15.00 EUR after the redraft."}],
    "quick": [{"text": "Done."}],
    # A conversation (interactions/conversation/chat-flow.mtr): a reply per message.
    "chat-flow": [{"text": "Hello! What is wrong?"}, {"text": "Sorry to hear it."}, {"text": "Goodbye."}],
    # An answer in a declared shape (result.schema): prose first, then the object.
    "shaped": [{"text": "It can be refunded."}, {"object": {"refundable": True, "amount": 40}}],
    # Agents as tools (test/e2e/sub-agents.test.ts's "triage-twice"): the triage agent hands the refund to the
    # billing agent, whose two refunds in a row (40, then the shipping, 7) each need a person's approval.
    "triage-twice": [
        {"toolCalls": [{"name": "billing-twice", "arguments": {"task": "Refund order A-1001 and its shipping"}}]},
        {"text": "Billing did both."},
    ],
    "billing-twice": [refund(40), refund(7), {"text": "Refunded 40 and the shipping (7)."}],
}


# The scripts of agents the tests deploy in their own namespaces (not part of the session's repo).
OWN_SCRIPTS: dict[str, list[dict[str, Any]]] = {
    # An agent acting for its run's end user: one call of its OAuth2 connector's tool.
    "whoami": [{"toolCalls": [{"name": "whoami", "arguments": {}}]}, {"text": "Looked."}],
    # An agent handing the look-up to the one above (agents as tools): the child run acts for the same end user.
    "delegate": [{"toolCalls": [{"name": "me-agent", "arguments": {"task": "Look the person up"}}]}, {"text": "Done."}],
}


def repo_files(origin: str) -> dict[str, str]:
    files = {
        "connectors/open-api/orders-get.mtr": f'''method = "GET"
url = "{origin}/orders/{{orderId}}"
description = "One order by its id"
auth = "Header"
parameters.path = [ {{ name = "orderId" description = "The order id" type = "string" }} ]
''',
        "connectors/open-api/orders-refund.mtr": f'''method = "POST"
url = "{origin}/orders/{{orderId}}/refund"
description = "Refunds an amount of an order"
auth = "Header"
parameters.path = [ {{ name = "orderId" description = "The order id" type = "string" }} ]
schema.request = {{
  type = "object"
  properties = {{
    amount = {{ type = "number" description = "The amount to refund" }}
    reason = {{ type = "string" description = "Why" }}
  }}
  required = ["amount", "reason"]
  additionalProperties = false
}}
''',
        "external-operations/open-api/get-order.mtr": '''connector = @ref("orders-get")
guidance = "Looks up an order by its id."
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
''',
        "external-operations/open-api/refund-order.mtr": '''connector = @ref("orders-refund")
guidance = "Refunds an order."
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
requiresApproval = true
''',
    }
    for agent in SCRIPTS:
        files[f"agents/{agent}.mtr"] = f'''model = "scripted:{agent}"
instructions = "Help customers with their orders."
functions = [ {{ ref = @ref("get-order") }}, {{ ref = @ref("refund-order") }} ]
'''
        files[f"interactions/one-shot/{agent}.mtr"] = f'''agent = {{ name = "Support" agent = @ref("{agent}") }}
task = "A customer writes: %%message%%"
inputs.prompts = [ {{ name = "message" description = "What the customer wrote" required = true }} ]
'''
    files["interactions/conversation/chat-flow.mtr"] = files.pop("interactions/one-shot/chat-flow.mtr")
    files["interactions/one-shot/shaped.mtr"] += """result.schema = {
  type = "object"
  properties = { refundable = { type = "boolean" } amount = { type = "number" } }
  required = ["refundable", "amount"]
}
"""
    # The triage agent's one function is the billing agent (an agent as a tool needs a summary).
    files["agents/triage-twice.mtr"] = '''model = "scripted:triage-twice"
instructions = "Route the customer to the right agent."
summary = "Routes questions"
functions = [ { agent = @ref("billing-twice") } ]
'''
    files["agents/billing-twice.mtr"] += 'summary = "Refunds orders and shipping"\n'
    # Tutorial 03's refund desk, for the example that approves from code: the full refund, then a redraft.
    files["interactions/one-shot/refund-desk.mtr"] = files["interactions/one-shot/redraft-flow.mtr"]
    return files


def write_repo(folder: Path, origin: str) -> Path:
    for relative, text in repo_files(origin).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


# --- mt serve ---------------------------------------------------------------------------------------------


def node() -> str:
    found = os.environ.get("MT_NODE") or shutil.which("node")
    if not found:
        raise RuntimeError("no node on PATH: run the tests through scripts/test-python.sh (it sources scripts/node.sh)")
    return found


def psql(sql: str) -> None:
    subprocess.run(["psql", PG_URL, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], check=True, capture_output=True)


@dataclass
class Serve:
    """A running `mt serve`: its URL and bootstrap admin key."""

    url: str
    admin_key: str
    process: subprocess.Popen[bytes]
    log: list[str]
    database: str | None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.database is not None:
            psql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')


def free_port() -> int:
    """A port no one listens on now (the server binds it a moment later)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
        return port


def start_serve(home: Path, backend: str, scripts: Path, extra_env: dict[str, str] | None = None) -> Serve:
    """Starts `mt serve` on a free port on a fresh PostgreSQL database (`postgres`) or PGlite in `home`
    (`pglite`), with that address as `MT_PUBLIC_URL`, so `auth = "Maitento"` connectors may call it."""
    admin_key = "mt_pytest_" + secrets.token_hex(18)
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "NODE_OPTIONS": "",
        "MT_SECRET_KEY": secrets.token_hex(32),
        "MT_BOOTSTRAP_KEY": admin_key,
        "MT_EGRESS_ALLOW": "127.0.0.1",
        "MT_SCRIPTED_MODELS": str(scripts),
        "MT_PUBLIC_URL": f"http://127.0.0.1:{port}",
        # Keep-alive comments every second (15 s by default), so the streams the tests read carry them.
        "MT_STREAM_KEEPALIVE_MS": "1000",
        **(extra_env or {}),
    }
    database = None
    if backend == "postgres":
        database = f"mt_pytest_{int(time.time())}_{secrets.token_hex(4)}"
        psql(f'CREATE DATABASE "{database}"')
        env["DATABASE_URL"] = re.sub(r"/[^/]*$", f"/{database}", PG_URL)
    process = subprocess.Popen(
        [node(), str(MT), "serve", "--port", str(port), "--host", "127.0.0.1"],
        cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    log: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode(errors="replace")
            log.append(line)
            match = re.search(r"listening on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1).rstrip("/"))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(90) or not found:
        process.kill()
        raise RuntimeError("mt serve did not start:\n" + "".join(log))
    return Serve(found[0], admin_key, process, log, database)


# --- A real OAuth 2 authorization server (oidc-provider, run with node) -------------------------------------


@dataclass
class AuthorizationServer:
    """`tests/authorization_server.mjs`: oidc-provider with one confidential client whose one redirect URI is
    Maitento's callback; its login and consent are finished for the account a request names (`x-test-account`)."""

    issuer: str
    client_id: str
    client_secret: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_authorization_server(redirect_uri: str) -> AuthorizationServer:
    script = Path(__file__).with_name("authorization_server.mjs")
    process = subprocess.Popen(
        [node(), str(script), redirect_uri], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            lines.append(raw.decode(errors="replace"))
            # Its one JSON line; oidc-provider's own warnings come before it.
            if lines[-1].startswith("{"):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not ready.wait(30) or not lines[-1:] or not lines[-1].startswith("{"):
            raise RuntimeError("the authorization server did not start")
        started = json.loads(lines[-1])
    except (RuntimeError, ValueError) as error:
        process.kill()
        raise RuntimeError(f"the authorization server did not start: {''.join(lines)}") from error
    return AuthorizationServer(started["issuer"], started["clientId"], started["clientSecret"], process)


def authorize(url: str, account: str, stop_at: str) -> str:
    """A person's browser, reduced to what the flow needs: follows the redirects of `url` with the cookies the
    authorization server sets, signed in as `account`, and returns the first redirect to `stop_at` (the callback)
    without opening it."""
    with httpx.Client(follow_redirects=False, timeout=10, headers={"x-test-account": account}) as browser:
        at = url
        for _ in range(20):
            if at.startswith(stop_at):
                return at
            response = browser.get(at)
            location = response.headers.get("location")
            if location is None:
                raise AssertionError(f"the authorization stopped at {at} with {response.status_code}: {response.text}")
            at = str(httpx.URL(at).join(location))
    raise AssertionError("the authorization did not come back in 20 redirects")


# --- A TCP proxy the tests break ----------------------------------------------------------------------------


class Proxy:
    """Forwards 127.0.0.1:port to the target. `cut()` closes every open connection; with `drop_first_post`,
    the answer to the first POST is read from the server and thrown away, and the connection closed."""

    def __init__(self, target: str, drop_first_post: bool = False) -> None:
        match = re.match(r"http://([^:/]+):(\d+)", target)
        assert match
        self.target = (match.group(1), int(match.group(2)))
        self.drop_pending = drop_first_post
        self.dropped = 0
        self.heads: list[str] = []
        self.connections = 0
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self.connections += 1
                self._open += [client, server]
            state = {"drop": False}
            threading.Thread(target=self._up, args=(client, server, state), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, state), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, state: dict[str, bool]) -> None:
        try:
            while data := client.recv(65536):
                if data[:5] in (b"GET /", b"POST ", b"PUT /", b"DELET"):
                    with self._lock:
                        self.heads.append(data.split(b"\r\n\r\n", 1)[0].decode(errors="replace"))
                        if data.startswith(b"POST ") and self.drop_pending:
                            self.drop_pending = False
                            state["drop"] = True
                server.sendall(data)
        except OSError:
            pass
        self._close(client, server)

    def _down(self, server: socket.socket, client: socket.socket, state: dict[str, bool]) -> None:
        try:
            while data := server.recv(65536):
                if state["drop"]:
                    # The server has answered (so it did the work): the client never sees it.
                    with self._lock:
                        self.dropped += 1
                    break
                client.sendall(data)
        except OSError:
            pass
        self._close(client, server)

    def _close(self, *sockets: socket.socket) -> None:
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def cut(self) -> None:
        """Closes every connection open now."""
        with self._lock:
            sockets, self._open = self._open, []
        self._close(*sockets)

    def close(self) -> None:
        self._listener.close()
        self.cut()
