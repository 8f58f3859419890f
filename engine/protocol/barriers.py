"""Information barriers: which sections an agent may see, and which it may read.

An agent *sees* a section (its id, title, level, version) when all of these hold:
- its clearance reaches the section's classification and those of all the sections above it
  (an unclassified section is open to all; a section's id is made of its parents' titles);
- the section and the sections above it belong to no organisation, or to the agent's;
- its context mode reaches it: ``Full`` and ``SummaryOnly`` every section; ``SectionScoped`` the
  invited sections and everything under them; ``Neighbourhood`` those plus their parents,
  siblings and children.
It *reads* a section (its content, proposals, intents, constraints, comments) when it sees it
and its mode is not ``SummaryOnly``. A section an agent does not see does not exist for it: every
read path leaves it out, events about it reach the agent without payload or section id, and a
command that names it is refused as ``section.not_found`` (the name the agent typed, nothing
else). A command or a briefing naming a section it sees but may not read is refused as
``classification.access_denied``. Humans and the system see and read everything.
"""

from __future__ import annotations

from engine.protocol.document import Document
from engine.protocol.errors import AccessDenied, SectionNotFound
from engine.protocol.model import Agent, Section


def sees(doc: Document, agent: Agent | None, section: Section) -> bool:
    """Whether ``agent`` (None: a human or the system) may know the section exists."""
    if agent is None or (agent.mode == "Full" and not doc.barred):
        return True  # nothing classified, no organisation's sections: no barrier to check
    # A section is under its parents' barriers too: its id is made of their titles.
    for barred in (section, *doc.ancestors(section)):
        if barred.rank > agent.clearance_rank:
            return False
        if barred.organisation is not None and barred.organisation != agent.organisation:
            return False
    return in_mode(doc, agent, section)


def reads(doc: Document, agent: Agent | None, section: Section) -> bool:
    """Whether ``agent`` may read the section's content and what is said about it."""
    if agent is None:
        return True
    return agent.mode != "SummaryOnly" and sees(doc, agent, section)


def named_section(
    doc: Document, agent: Agent | None, section_id: str, now_ms: int, *, read: bool = True
) -> Section:
    """The section ``section_id`` names (an alias too) for ``agent`` to act on or read about:
    ``section.not_found`` if it does not exist or the agent does not see it (the same words
    either way: only the id typed), ``classification.access_denied`` if ``read`` and the agent
    sees it but may not read it."""
    section = doc.section(section_id, now_ms)
    if section is None or not sees(doc, agent, section):
        raise SectionNotFound(
            f"no section {section_id!r} in document {doc.name!r}", sectionId=section_id
        )
    if read and not reads(doc, agent, section):
        mode = agent.mode if agent is not None else "?"
        raise AccessDenied(
            f"section {section_id!r} is outside what you may read (context mode {mode})",
            sectionId=section_id,
        )
    return section


def in_mode(doc: Document, agent: Agent, section: Section) -> bool:
    if agent.mode in ("Full", "SummaryOnly"):
        return True
    scope = set(agent.scope)
    if section.key in scope:
        return True
    above = {a.key for a in doc.ancestors(section)}
    if agent.mode == "SectionScoped":
        return bool(above & scope)
    # Neighbourhood: under a scoped section, its parent, a sibling, or a child.
    if above & scope:
        return True
    for key in scope:
        scoped = doc.by_key.get(key)
        if scoped is None:
            continue
        if scoped.parent == section.key or scoped.parent == section.parent:
            return True
    return False
