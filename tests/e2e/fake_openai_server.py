"""A stand-in OpenAI-compatible server for `canrun bench --endpoint` tests: /v1/models, and
/v1/completions and /v1/chat/completions streamed as server-sent events, one chunk per token a
fixed delay apart, with switches for the failures a bench must count."""
import json
import threading
import time

from local_server import LocalServer, QuietHandler

MODEL = "fake-model"


class FakeOpenAIServer(LocalServer):
    def __init__(self, token_delay_s=0.002, fail_every=0, usage=True, close_early=False, short_by=0):
        super().__init__(Handler)
        self.token_delay_s = token_delay_s
        self.fail_every = fail_every  # every n-th completion request answers 500
        self.usage = usage  # whether the stream ends with a usage chunk
        self.close_early = close_early  # streams end without [DONE]
        self.short_by = short_by  # answers this many tokens fewer than max_tokens
        self.requests = []  # the JSON bodies of completion requests, in arrival order
        self.lock = threading.Lock()


class Handler(QuietHandler):
    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        chat = self.path == "/v1/chat/completions"
        if not chat and self.path != "/v1/completions":
            return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
        with server.lock:
            server.requests.append(body)
            count = len(server.requests)
        if body.get("model") != MODEL:
            return self.send_json(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
        if server.fail_every and count % server.fail_every == 0:
            return self.send_json(500, {"error": {"message": "overloaded"}})
        prompt = body["messages"][-1]["content"] if chat else body["prompt"]
        prompt_tokens = len(prompt) if isinstance(prompt, list) else len(prompt.split())
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        tokens = body["max_tokens"] - server.short_by
        for _ in range(tokens):
            time.sleep(server.token_delay_s)
            choice = {"index": 0, "delta": {"content": "t"}} if chat else {"index": 0, "text": "t"}
            self.wfile.write(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
            self.wfile.flush()
        if server.close_early:
            return
        if server.usage:
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": tokens}
            self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
