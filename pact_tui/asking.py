"""What a custodian's prompt says of the thing it acts on, and the pickers' options.

Every action prompt of the document screen names what it acts on (issue 24): a proposal by its
section (title and id), author, summary, status and diff size; an agent by its name, trust,
clearance and whether it is on the document. Rows re-sort as proposals arrive, so a prompt acts
on the proposal the custodian highlighted, and says so when the row under the cursor is another
one now, or when the highlighted one changed since (``held_note``).

Plain strings: the prompts show them as text, never markup (``PromptScreen`` and the others).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .diffs import changed, unified
from .screens.pick import Pick

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Agent, ConflictGroup, Proposal

    from .widgets.queue import QueueRow

SUMMARY = 80  # characters of a summary a prompt quotes


def diff_size(proposal: Proposal) -> str:
    """``+a/−r lines``: what the proposal adds to and removes from the text it was based on."""
    removed, added = changed(unified(proposal.base_content, proposal.content))
    return f"+{added}/−{removed} lines"


def describe_proposal(doc: Document, proposal_id: str) -> str:
    """``proposal …3f2a0c on “Budget” (sec:plan/budget) by agent legal: “cut 10%” · Pending ·
    +3/−1 lines``."""
    from engine.protocol.model import who

    proposal = doc.proposals[proposal_id]
    section = doc.by_key[proposal.section]
    summary = proposal.summary or ""
    if len(summary) > SUMMARY:
        summary = summary[: SUMMARY - 1] + "…"
    said = f": “{summary}”" if summary else " (no summary)"
    return (
        f"proposal …{proposal.id[-8:]} on “{section.title}” ({section.id})"
        f" by {who(proposal.author_name, proposal.author_kind)}{said}"
        f" · {proposal.status} · {diff_size(proposal)}"
    )


def held_note(doc: Document, held: QueueRow | None, row: QueueRow) -> tuple[str, str]:
    """The proposal to act on (the one highlighted, ``held``, as it was when the cursor landed
    on it; else the row under the cursor) and what the prompt must say of it: that the row
    under the cursor is another proposal now, or that the highlighted one changed since."""
    if held is None or held.key not in doc.proposals:
        return row.key, ""
    notes: list[str] = []
    if held.key != row.key:
        notes.append(
            "The rows moved as proposals arrived: the row under the cursor is now"
            f" {describe_proposal(doc, row.key)}. This acts on the one you highlighted."
        )
    now = doc.proposals[held.key].status
    if now != held.status:
        notes.append(f"It changed since you highlighted it: it was {held.status}, it is {now}.")
    return held.key, "\n".join(notes)


def describe_agent(doc: Document, agent: Agent) -> str:
    """``agent legal (reviewer) · Collaborator · cleared Internal · on the document``."""
    role = f" ({agent.role})" if agent.role else ""
    clearance = f"cleared {agent.clearance}" if agent.clearance else "uncleared"
    state = "on the document" if agent.active else f"gone: {agent.gone or 'left'}"
    return f"agent {agent.name}{role} · {agent.trust} · {clearance} · {state}"


def agent_picks(doc: Document, active_only: bool = False) -> list[Pick]:
    """Every agent of the document (those on it first), to pick one by name."""
    agents = sorted(doc.agents.values(), key=lambda a: (not a.active, a.name))
    return [
        Pick(describe_agent(doc, a), a.name, a.id) for a in agents if a.active or not active_only
    ]


def level_picks(levels: tuple[str, ...] | list[str], current: str | None) -> list[Pick]:
    """Levels (trust or clearance) in their order, the current one marked."""
    return [Pick(f"{level}{'  (now)' if level == current else ''}", level) for level in levels]


def side_picks(doc: Document, group: ConflictGroup, merged: str | None) -> list[Pick]:
    """A conflict's sides (each proposal, described), and its three-way result if it has one
    (``merged``: the value that picks it)."""
    sides = [pid for pid in group.proposals if pid in doc.proposals]
    picks = [Pick(describe_proposal(doc, pid), pid, pid) for pid in sides]
    if group.merged is not None and merged is not None:
        label = "the three-way result of the sides (edit its overlaps first)"
        picks.append(Pick(label, merged, merged))
    return picks


def proposal_picks(doc: Document, ids: list[str]) -> list[Pick]:
    """Proposals by id (each described): typing the start or the end of an id finds it."""
    return [Pick(describe_proposal(doc, pid), pid, pid) for pid in ids]
