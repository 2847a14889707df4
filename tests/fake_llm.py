"""A deterministic stand-in model and a loopback server speaking enough of the Anthropic Messages
and OpenAI chat-completions APIs for the real SDKs (tests only; 127.0.0.1, bounded, stops itself).

`python tests/fake_llm.py` reads a prompt on stdin and prints `fake_reply(prompt)`: the command
client that recorded fixtures/extraction/default.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_'-]+")


def fake_reply(prompt: str) -> str:
    """Candidates from the transcript's longer lines, picked by their digest: same prompt, same reply."""
    body = prompt.split("{{TRANSCRIPT}}")[-1]
    lines = []
    for line in body.splitlines():
        words = _WORDS.findall(line)
        if len(words) >= 12:
            lines.append(words)
    picked = sorted(lines, key=lambda w: hashlib.sha256(" ".join(w).encode()).hexdigest())[:4]
    cands = [
        {"type": "fact", "title": " ".join(w[:6]), "body": " ".join(w[:24]), "evidence": " ".join(w[:4]), "confidence": 0.8}
        for w in picked
    ]
    return json.dumps({"candidates": cands})


class FakeLLM:
    """`with FakeLLM(replies) as srv:` serves on `srv.url`; `replies` maps prompt sha256 to a reply text,
    or to an int HTTP status to fail with; other prompts get `fake_reply`. Stops after `lifetime` s."""

    def __init__(self, replies: dict | None = None, lifetime: float = 60.0):
        self.replies = replies or {}
        self.lifetime = lifetime
        self.requests: list[str] = []  # paths of the requests served
        self.bodies: list[dict] = []  # their JSON bodies

    def __enter__(self) -> "FakeLLM":
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                req = json.loads(self.rfile.read(n) or b"{}")
                owner.requests.append(self.path)
                owner.bodies.append(req)
                content = req["messages"][-1]["content"]
                prompt = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                answer = owner.replies.get(hashlib.sha256(prompt.encode()).hexdigest(), None)
                if isinstance(answer, int):
                    return self._send(answer, {"type": "error", "error": {"type": "api_error", "message": "fake failure"}})
                text = fake_reply(prompt) if answer is None else answer
                model = req.get("model", "fake")
                if self.path.endswith("/messages"):
                    payload = {
                        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4},
                    }
                elif self.path.endswith("/chat/completions"):
                    payload = {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4, "total_tokens": 0},
                    }
                else:
                    return self._send(404, {"error": {"message": "not found"}})
                self._send(200, payload)

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        self.timer = threading.Timer(self.lifetime, self.server.shutdown)
        self.timer.daemon = True
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.cancel()
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    sys.stdout.write(fake_reply(sys.stdin.read()))
