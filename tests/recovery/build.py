"""A tiny writer of valid ledgers in the v3 (wrapper results) or v4 (tool-role) shape."""

from __future__ import annotations

from typing import Any


class LedgerBuilder:
    """Appends well-formed events with dense seqs and times ``1000 + 10 * seq``."""

    def __init__(self, version: int = 4) -> None:
        self.version = version
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.step = 0
        self._call_seqs: dict[str, int] = {}

    def _add(self, kind: str, data: dict[str, Any], **envelope: Any) -> int:
        seq = len(self.events)
        self.events.append({"type": kind, "seq": seq, "time": 1000 + 10 * seq, "data": data})
        self.events[-1].update(envelope)
        return seq

    def turn_start(self) -> int:
        self.turn += 1
        self.step = 0
        return self._add("turn/start", {"turn": self.turn})

    def user(self, text: str = "hi", kind: str = "user") -> int:
        message = {
            "id": f"u{len(self.events)}",
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": kind},
        }
        return self._add("user/message", message, surfaceOp="append")

    def step_start(self) -> int:
        self.step += 1
        return self._add("step/start", {"turn": self.turn, "step": self.step})

    def assistant(self, *call_ids: str, text: str | None = "ok") -> int:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool-call", "id": c, "name": "bash", "arguments": '{"n":1}'} for c in call_ids
        ]
        message = {
            "id": f"a{len(self.events)}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": "p", "model": "m"},
        }
        data = {"turn": self.turn, "step": self.step, "message": message, "stream": []}
        return self._add("assistant/message", data, surfaceOp="append")

    def tool_call(self, call_id: str) -> int:
        seq = self._add(
            "tool/call",
            {
                "turn": self.turn,
                "step": self.step,
                "callId": call_id,
                "name": "bash",
                "arguments": '{"n":1}',
            },
        )
        self._call_seqs[call_id] = seq
        return seq

    def tool_result(self, call_id: str, *, is_error: bool = False, code: str | None = None) -> int:
        text = [{"type": "text", "text": "out"}]
        source = {"kind": "tool", "callId": call_id}
        if self.version >= 4:
            message = {
                "id": f"r{len(self.events)}",
                "role": "tool",
                "toolCallId": call_id,
                "isError": is_error,
                "source": source,
                "content": text,
            }
        else:
            message = {
                "id": f"r{len(self.events)}",
                "role": "user",
                "source": source,
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": call_id,
                        "isError": is_error,
                        "content": text,
                    }
                ],
            }
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if code:
            data["error"] = {"name": "Error", "code": code}
        envelope: dict[str, Any] = {"surfaceOp": "append"}
        if call_id in self._call_seqs:
            envelope["sourceEventSeqs"] = [self._call_seqs[call_id]]
        return self._add("tool/result", data, **envelope)

    def step_end(self) -> int:
        return self._add("step/end", {"turn": self.turn, "step": self.step})

    def answered_step(self, call_id: str) -> int:
        """Append a step whose assistant message requests ``call_id``, then its dispatch, its
        result and the step's end (five events); return the assistant message's seq."""
        self.step_start()
        requested = self.assistant(call_id)
        self.tool_call(call_id)
        self.tool_result(call_id)
        self.step_end()
        return requested

    def turn_end(self, kind: str = "completed") -> int:
        return self._add("turn/end", {"turn": self.turn, "reason": {"kind": kind}})

    def log(self, kind: str = "todo/write") -> int:
        return self._add(kind, {"todos": []})

    def extend(self, events: list[dict[str, Any]]) -> None:
        """Append already built events (closers) as they are."""
        self.events.extend(events)


def requesting(*call_ids: str, version: int = 4) -> LedgerBuilder:
    """Return a builder holding a turn/start, a user message, a step/start and an assistant
    message requesting ``call_ids`` (seqs 0-3), for the test to go on from."""
    b = LedgerBuilder(version)
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant(*call_ids)
    return b


def crashed_mid_dispatch() -> LedgerBuilder:
    """Return turn 1 answered, then turn 2's call B dispatched (seq 12) and the process
    dead: the fork point is the assistant message at seq 11."""
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.answered_step("A")  # 2-6: A requested at 3, dispatched at 4, answered at 5
    b.turn_end()  # 7
    b.turn_start()  # 8
    b.user("two")  # 9
    b.step_start()  # 10
    b.assistant("B", "C")  # 11: F, the first unresolved call's request
    b.tool_call("B")  # 12, then the process died
    return b
