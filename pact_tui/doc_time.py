"""Time on the custodian's screen: every duration the app shows (``duration``), the steps ``.``
takes, a step typed in, and what firing due work did, said in words (``fired_words``) and in
one line (``fired_summary``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
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
    """Every duration the app shows, in its two largest units: ``42s``, ``3m05s``, ``23h52m``,
    ``2d 3h``; a unit that is zero at the end is left out (``5m``, ``1h``, ``2d``)."""
    seconds = max(0, seconds)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m{secs:02d}s" if secs else f"{minutes}m"
    return f"{secs}s"


def fired_words(events: Sequence[Mapping[str, Any]], limit: int = 12) -> str:
    """What the due work did, one phrase per event (the first ``limit``, then how many more):
    ``merged <proposal id> on sec:budget (window ended) · released the lock on sec:budget
    (expired)``; ``nothing was due`` if nothing."""
    from engine.protocol.envelope import payload

    said = []
    for event in events[:limit]:
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
    if len(events) > limit:
        said.append(f"and {len(events) - limit:,} more")
    return visible(" · ".join(said)) if said else "nothing was due"


# What ``fired_summary`` calls each kind of event the due work emits: (one, many, why). The why
# of a rule with a fixed time names it (the engine's), as the custodian would ask.
def _kinds() -> dict[str, tuple[str, str, str]]:
    from engine.protocol.model import ALIAS_FOR_S, ESCALATE_CONFLICT_AFTER_S, EVICT_AFTER_S

    return {
        "pact.agent.evicted": (
            "agent evicted",
            "agents evicted",
            f"silent > {duration(EVICT_AFTER_S)}",
        ),
        "pact.proposal.auto-merged": (
            "proposal merged",
            "proposals merged",
            "objection window ended",
        ),
        "pact.proposal.merged": ("proposal merged", "proposals merged", ""),
        "pact.proposal.rejected": ("proposal rejected", "proposals rejected", ""),
        "pact.proposal.approved": (
            "proposal paused",
            "proposals paused",
            "section escalated to a human",
        ),
        "pact.proposal.conflict": ("conflict opened", "conflicts opened", ""),
        "pact.proposal.conflict-resolved": (
            "conflict settled",
            "conflicts settled",
            "votes counted",
        ),
        "pact.escalation.human": (
            "conflict escalated",
            "conflicts escalated",
            f"open > {duration(ESCALATE_CONFLICT_AFTER_S)}",
        ),
        "pact.section.unlocked": ("lock expired", "locks expired", ""),
        "pact.section.alias-expired": (
            "old section id expired",
            "old section ids expired",
            f"after {duration(ALIAS_FOR_S)}",
        ),
        "pact.intent.accepted": ("intent accepted", "intents accepted", "no objection in time"),
        "pact.human.timed-out": ("question timed out", "questions timed out", ""),
    }


def fired_summary(events: Iterable[Mapping[str, Any]]) -> str:
    """What the due work did, in one line: how many of each kind, and why, most first:
    ``1,000 agents evicted (silent > 5m), 3 proposals merged (objection window ended)``;
    ``nothing was due`` if nothing."""
    kinds = _kinds()
    counts = Counter(str(event["eventType"]) for event in events)
    said = []
    for event_type, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        one, many, why = kinds.get(event_type, (event_type, event_type, ""))
        said.append(f"{count:,} {one if count == 1 else many}" + (f" ({why})" if why else ""))
    return visible(", ".join(said)) if said else "nothing was due"
