"""Minimal OpenAI-compatible streaming server for an interop check."""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0)); req = json.loads(self.rfile.read(n) or b"{}")
        out = int(req.get("max_tokens") or req.get("max_completion_tokens") or 8)
        chat = self.path.endswith("chat/completions")
        self.send_response(200); self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
        def send(obj):
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data)); self.wfile.flush()
        time.sleep(0.02)
        for i in range(out):
            if chat: choice = {"index": 0, "delta": {"content": " tok"}, "finish_reason": None}
            else: choice = {"index": 0, "text": " tok", "finish_reason": None}
            send({"id": "x", "object": "chat.completion.chunk" if chat else "text_completion", "model": "fake", "choices": [choice]})
            time.sleep(0.003)
        send({"id": "x", "object": "chat.completion.chunk", "model": "fake", "choices": [],
              "usage": {"prompt_tokens": 128, "completion_tokens": out, "total_tokens": 128 + out}})
        send("[DONE]")
        self.wfile.write(b"0\r\n\r\n"); self.wfile.flush()

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
