"""Conversations and answers in a declared shape through the Python SDK (issue #21): `interaction_runs.run` returns a
conversation at its first reply, `send` continues it and returns the next reply; a result schema's run has a dict
as its result. On the real mt serve (PostgreSQL and PGlite) with the scripted model."""

from __future__ import annotations

import pytest

from maitento import ConflictError, Maitento, UnprocessableEntityError


def test_a_conversation_runs_to_each_reply_and_send_continues_it(mt: Maitento) -> None:
    run = mt.interaction_runs.run("chat-flow", inputs={"message": "My kettle"})
    assert run.status == "WaitingForInput"
    assert run.result == "Hello! What is wrong?"

    with pytest.raises(UnprocessableEntityError) as empty:
        mt.interaction_runs.send(run.id, "   ")
    assert empty.value.code == "api:runs:message-empty"

    second = mt.interaction_runs.send(run.id, "It arrived broken.")
    assert second.status == "WaitingForInput"
    assert second.result == "Sorry to hear it."
    third = mt.interaction_runs.send(run.id, "Thanks.")
    assert third.result == "Goodbye."

    messages = [e.data["text"] for e in mt.interaction_runs.list_events(run.id) if e.type == "user-message"]
    assert messages == ["It arrived broken.", "Thanks."]

    mt.interaction_runs.cancel(run.id)
    with pytest.raises(ConflictError) as ended:
        mt.interaction_runs.send(run.id, "Hello?")
    assert ended.value.code == "api:runs:already-ended"


def test_a_result_schema_makes_the_result_a_dict_after_one_retry(mt: Maitento) -> None:
    run = mt.interaction_runs.run("shaped", inputs={"message": "Can A-1001 be refunded?"})
    assert run.status == "Completed"
    assert run.result == {"refundable": True, "amount": 40}
    types = [e.type for e in mt.interaction_runs.list_events(run.id)]
    assert types.count("result-invalid") == 1
