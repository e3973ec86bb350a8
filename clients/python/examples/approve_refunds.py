# file: approve_refunds.py
# Approves refunds from code: rejects any above 20 EUR with a reason, approves the redraft (tutorial 03).
# Run it with `python approve_refunds.py`; MT_API_URL and MT_API_KEY say which server and key.
import json

from maitento import Maitento, Run

mt = Maitento()


def on_waiting(waiting: Run) -> None:
    approval = waiting.pending_approval
    assert approval is not None
    call = json.loads(approval.arguments_json)  # {"request": {"amount", "reason"}, "additionalInputs": ...}
    if call["request"]["amount"] <= 20:
        print(f"approving {approval.function_name} of {call['request']['amount']}")
        mt.interaction_runs.approve(waiting.id, approval_id=approval.id)
    else:
        print(f"rejecting {approval.function_name} of {call['request']['amount']}")
        mt.interaction_runs.reject(
            waiting.id,
            approval_id=approval.id,
            reason="Above 20 EUR needs a manager: offer a partial refund",
        )


finished = mt.interaction_runs.run(
    "refund-desk",
    inputs={"message": "My glass kettle, order A-1001, arrived with a cracked lid."},
    on_waiting=on_waiting,
)
print(finished.status, finished.result or finished.error)
mt.close()
