"""The base of the tests' stand-in HTTP servers: threaded, on a free loopback port, served from a
background thread for the length of a `with` block."""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler):
        super().__init__(("127.0.0.1", 0), handler)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no request log on stderr."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass
