"""The same as approve_refunds.py with AsyncMaitento: `on_waiting` may be a coroutine function."""

import asyncio
import json

from maitento import AsyncMaitento, Run


async def main() -> None:
    async with AsyncMaitento() as mt:

        async def on_waiting(waiting: Run) -> None:
            approval = waiting.pending_approval
            assert approval is not None
            amount = json.loads(approval.arguments_json)["request"]["amount"]
            if amount <= 20:
                print(f"approving {approval.function_name} of {amount}")
                await mt.interaction_runs.approve(waiting.id, approval_id=approval.id)
            else:
                print(f"rejecting {approval.function_name} of {amount}")
                await mt.interaction_runs.reject(waiting.id, approval_id=approval.id, reason="Refund the lid only")

        finished = await mt.interaction_runs.run(
            "refund-desk",
            inputs={"message": "My glass kettle, order A-1001, arrived with a cracked lid."},
            on_waiting=on_waiting,
        )
        print(finished.status, finished.result or finished.error)


if __name__ == "__main__":
    asyncio.run(main())
