"""Protocol time on the custodian's screen: the steps ``.`` takes, a step typed in, how far
ahead of the clock protocol time is, and what a step fired, said in words."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.protocol_time import MAX_STEP_S
from engine.visible import visible

STEPS = (1, 10, 60, 300, 600, 3600)  # what ``+`` cycles through (seconds)
UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600}
STEP = re.compile(r"^\s*(\d{1,6})\s*(s|m|min|h)?\s*$")


def parse_step(text: str) -> int:
    """A step typed by the custodian (``300``, ``10s``, ``5m``, ``1h``) in seconds;
    ``ValueError`` saying what is accepted for anything else."""
    found = STEP.match(text.lower())
    seconds = int(found.group(1)) * UNITS[found.group(2) or ""] if found else 0
    if not 1 <= seconds <= MAX_STEP_S:
        raise ValueError(
            f"{text!r}: give a step of 1 s to {MAX_STEP_S // 3600} h, as 30, 10s, 5m or 1h"
        )
    return seconds


def duration(seconds: int) -> str:
    """``90`` → ``1 min 30 s``: a step or how far ahead, as people say it."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    parts.append(f"{secs} s" if secs or not (hours or minutes) else "")
    return " ".join(p for p in parts if p)


def fired_words(events: Iterable[Mapping[str, Any]]) -> str:
    """What the due work did, one phrase per event: ``merged <proposal id> on sec:budget (window
    ended) · released the lock on sec:budget (expired)``; ``nothing was due`` if nothing."""
    from engine.protocol.envelope import payload

    said = []
    for event in events:
        data = payload(event)
        kind = str(event["eventType"]).removeprefix("pact.")
        where = f" on {event['sectionId']}" if event.get("sectionId") else ""
        proposal = str(data.get("proposalId", ""))
        if kind == "proposal.auto-merged":
            said.append(f"merged {proposal}{where} (window ended)")
        elif kind == "proposal.merged":
            said.append(f"merged {proposal}{where}")
        elif kind == "proposal.rejected":
            said.append(f"rejected {proposal}{where}")
        elif kind == "section.unlocked":
            said.append(f"released the lock{where} ({data.get('reason', 'released')})")
        elif kind == "agent.evicted":
            said.append(f"evicted {data.get('agentName', '?')} (silent too long)")
        elif kind == "intent.accepted":
            said.append(f"accepted an intent{where}")
        elif kind == "human.timed-out":
            said.append(f"a question timed out{where}")
        elif kind == "section.alias-expired":
            said.append(f"alias {data.get('alias', '?')} expired")
        elif kind == "proposal.conflict-resolved":
            said.append(f"settled the conflict{where} ({data.get('how', '?')})")
        elif kind == "escalation.human":
            said.append(f"escalated{where} to the custodian")
        else:
            said.append(f"{kind}{where}")
    return visible(" · ".join(said)) if said else "nothing was due"
