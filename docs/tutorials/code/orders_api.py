# file: orders_api.py
# A small orders API for two shops, each with its own API key (tutorials 02 and 03), the same as orders-api.ts.
# Run it with `python3 orders_api.py` (Python 3.10 or newer; the standard library only).
import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Each shop's key comes from the environment; a request's X-Api-Key header says which shop it is for.
SHOPS: dict[str, dict[str, Any]] = {
    os.environ.get("TEAPOT_SHOP_KEY", "teapot-key"): {
        "name": "Teapot Shop",
        "orders": {
            "A-1001": {"id": "A-1001", "item": "Glass kettle", "paid": 49.9, "currency": "EUR",
                       "status": "delivered", "refunded": 0},
        },
    },
    os.environ.get("CUP_SHOP_KEY", "cup-key"): {
        "name": "Cup Shop",
        "orders": {
            "B-2001": {"id": "B-2001", "item": "Six tea cups", "paid": 24, "currency": "EUR",
                       "status": "shipped", "refunded": 0},
        },
    },
}


class Orders(BaseHTTPRequestHandler):
    def send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_order(self) -> None:
        shop = SHOPS.get(self.headers.get("x-api-key", ""))
        if shop is None:
            return self.send(401, {"error": "unknown API key"})
        match = re.fullmatch(r"/orders/([\w-]+)(/refund)?", self.path.split("?")[0])
        order = shop["orders"].get(match.group(1)) if match else None
        if match is None or order is None:
            return self.send(404, {"error": f"no such order in {shop['name']}"})
        if self.command == "GET" and not match.group(2):
            return self.send(200, {"shop": shop["name"], **order})
        if self.command == "POST" and match.group(2):
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            amount, left = body.get("amount"), order["paid"] - order["refunded"]
            if not isinstance(amount, (int, float)) or isinstance(amount, bool) or not 0 < amount <= left:
                return self.send(422, {"error": f"a refund must be between 0 and {left}"})
            order["refunded"] += amount
            print(f"refunded {amount} {order['currency']} of {order['id']}: {body.get('reason')}", flush=True)
            refund_id = f"R-{order['id']}-{order['refunded']}"
            return self.send(200, {"refundId": refund_id, "orderId": order["id"], "amount": amount,
                                   "status": "refunded"})
        self.send(405, {"error": "method not allowed"})

    do_GET = do_POST = handle_order

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "3000"))), Orders)
print(f"orders API listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
