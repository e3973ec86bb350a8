"""Starts a run and prints its events as they happen; then lists the latest runs, page after page."""

import sys

from maitento import Maitento, NotFoundError


def main(interaction: str) -> None:
    with Maitento() as mt:
        try:
            run = mt.interaction_runs.start(interaction, inputs={"message": "Where is my order A-1001?"})
        except NotFoundError as error:
            sys.exit(f"{error.code}: {error.message}")
        for event in mt.interaction_runs.events(run.id):
            print(event.seq, event.type)
            if event.type == "run-waiting":
                mt.interaction_runs.approve(run.id)
        for summary in mt.interaction_runs.list(interaction=interaction, limit=50):
            print(summary.id, summary.status)


if __name__ == "__main__":
    # The example repository's front desk (interactions/one-shot/triage.mtr), which takes a `message`; name another
    # interaction that takes one as the first argument.
    main(sys.argv[1] if len(sys.argv) > 1 else "triage")
