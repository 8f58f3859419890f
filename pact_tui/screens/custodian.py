"""The custodian's own powers on a document, in the app: edit, classify and force-unlock a
section, mark a constraint, change the policy or the strategy, lock the document, hand out and
revoke invites, set an agent's disclosure, create a framework.

``!`` on the document screen opens the menu of them (the palette lists them too); each asks
what its command needs with the modal screens every prompt uses (a short list of choices, a
line of text, the editor), validates as it goes, and runs the command as the custodian, saying
what it did. Escape at any question does nothing. An invite's token is shown once, in a screen
of its own with a key to copy it: the document keeps only its hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from engine.visible import visible

from ..keymap import bind
from ..text import plain
from .choose import Choice, ChooseScreen

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Section
    from engine.protocol.results import DocumentResult
    from engine.workspace import Workspace

    from ..types import DocShown

KEYS = "123456789abcdefghijklmnopqrstuvwxyz"
INVITE_TTLS = (
    ("1 hour", 3_600),
    ("1 day", 86_400),
    ("7 days", 7 * 86_400),
    ("30 days", 30 * 86_400),
)


def keyed(labels: Sequence[tuple[str, str]]) -> list[Choice]:
    """Choices keyed 1-9 then a-z (the rest by the cursor and Enter only)."""
    return [
        Choice(KEYS[n] if n < len(KEYS) else "", label, value)
        for n, (label, value) in enumerate(labels)
    ]


@dataclass(frozen=True, slots=True)
class MenuItem:
    key: str
    action: str
    label: str


def menu(doc: Document, section: Section | None) -> list[MenuItem]:
    """What the custodian may do now: on the section under the outline's cursor (if any),
    then on the document."""
    items: list[MenuItem] = []
    if section is not None:
        name = visible(section.id)
        items.append(MenuItem("e", "edit", f"Edit {name} directly"))
        items.append(MenuItem("k", "classify", f"Classify {name}"))
        if section.lock is not None:
            items.append(MenuItem("u", "force-unlock", f"Force-unlock {name}"))
        if doc.constraints_of(section.key):
            items.append(MenuItem("m", "mark-constraint", f"Mark a constraint on {name}"))
    items.append(MenuItem("p", "policy", f"Approval policy (now {doc.policy})"))
    items.append(MenuItem("s", "strategy", f"Conflict strategy (now {doc.strategy})"))
    items.append(
        MenuItem("g", "removal-guard", f"Removal guard (now {doc.removal_guard}% of a section)")
    )
    if doc.locked is None:
        items.append(MenuItem("l", "lock-document", "Lock the document"))
    else:
        items.append(MenuItem("l", "unlock-document", "Unlock the document"))
    items.append(MenuItem("n", "invite", "New invite (its token shown once)"))
    items.append(MenuItem("v", "invites", f"Invites ({len(doc.invites)}): list, revoke"))
    items.append(MenuItem("f", "framework", "New classification framework"))
    return items


class InvitesScreen(ModalScreen[str | None]):
    """The document's invites; dismisses with ``"new"``, ``"revoke:HASH"`` or None."""

    DEFAULT_CSS = """
    InvitesScreen { align: center middle; }
    InvitesScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 1 2;
    }
    InvitesScreen Label { margin-bottom: 1; }
    InvitesScreen OptionList { height: auto; max-height: 20; }
    InvitesScreen #invites-hint { color: $text-muted; margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("new-invite", "new", "New invite"),
        bind("revoke", "revoke", "Revoke"),
        bind("close", "close", "Close"),
    ]

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain(f"Invites ({len(self.rows)})"), markup=False)
            yield OptionList(
                *[Option(plain(invite_line(row)), id=row["tokenHash"]) for row in self.rows],
                id="invites",
            )
            yield Label(
                "n new invite · x revoke the one under the cursor · Esc close",
                id="invites-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def action_new(self) -> None:
        self.dismiss("new")

    def action_revoke(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            self.notify("No invite under the cursor.", severity="warning")
            return
        self.dismiss(f"revoke:{options.get_option_at_index(options.highlighted).id}")

    def action_close(self) -> None:
        self.dismiss(None)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # Enter on a row does nothing: revoking is x, said in the hint


def invite_line(row: dict[str, Any]) -> str:
    scope = f" {','.join(row['scope'])}" if row["scope"] else ""
    clearance = f" cleared {row['clearance']}" if row["clearance"] else ""
    by = f" by {row['usedBy']}" if row["usedBy"] else ""
    by += f" by {row['revokedBy']}" if row["revokedBy"] else ""
    return (
        f"{row['invite']}  {row['state']}{by} · {row['trustLevel']} · {row['mode']}{scope}"
        f"{clearance} · made by {row['createdBy']}"
    )


class TokenScreen(ModalScreen[None]):
    """An invite's token, shown this once: ``y`` copies it (OSC 52), Esc or Enter closes."""

    DEFAULT_CSS = """
    TokenScreen { align: center middle; }
    TokenScreen > Vertical {
        width: 90%; max-width: 110; height: auto;
        border: round $success; background: $surface; padding: 1 2;
    }
    TokenScreen #token { text-style: bold; margin: 1 0; }
    TokenScreen #token-hint { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("copy", "copy", "Copy the token"),
        bind("close-token", "close", "Close"),
    ]

    def __init__(self, token: str, about: str) -> None:
        super().__init__()
        self.token = token
        self.about = about

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain(self.about), markup=False)
            yield Label(plain(self.token), id="token", markup=False)
            yield Label(
                "This is the only time the token is shown: the document keeps its hash only."
                " y copies it · Esc closes",
                id="token-hint",
                markup=False,
            )

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.token)
        self.notify("The token is on the clipboard.", title="Invite")

    def action_close(self) -> None:
        self.dismiss(None)


class CustodianActions(Screen[None]):
    """The document screen's custodian powers: ``DocumentScreen`` is one of these."""

    if TYPE_CHECKING:
        shown: DocShown | None
        section_id: str | None

        @property
        def workspace(self) -> Workspace: ...

        @property
        def custodian(self) -> str: ...

        async def command(self, command: dict[str, Any]) -> DocumentResult | None: ...

        def _live_doc(self) -> Document | None: ...

    def action_custodian_menu(self) -> None:
        self.custodian_action(None)

    @work(group="custodian-actions")
    async def custodian_action(self, action: str | None) -> None:
        """Ask for ``action`` (None: from the menu) what it needs, then run it."""
        shown = self.shown
        if shown is None:
            return
        if self._live_doc() is None:  # the past, or read-only: said why
            return
        doc = shown.doc
        section = doc.section(self.section_id, shown.now_ms) if self.section_id else None
        if action is None:
            items = menu(doc, section)
            action = await self._choose(
                "The custodian's actions", [Choice(i.key, i.label, i.action) for i in items]
            )
            if action is None:
                return
        act = getattr(self, f"_do_{action.replace('-', '_')}", None)
        if act is None:
            return
        if action in ("edit", "classify", "force-unlock", "mark-constraint") and section is None:
            self.notify("Highlight a section in the outline (O) first.", severity="warning")
            return
        await act(doc, section)

    # -- asking --------------------------------------------------------------------------------
    async def _choose(self, title: str, choices: list[Choice]) -> str | None:
        picked: str | None = await self.app.push_screen_wait(ChooseScreen(title, choices))
        return picked

    async def _question(self, question: str, value: str = "", check: Any = None) -> str | None:
        from .prompt import PromptScreen

        answer: str | None = await self.app.push_screen_wait(
            PromptScreen(question, value=value, check=check)
        )
        return answer.strip() if answer is not None else None

    async def _run(self, command: dict[str, Any], said: str) -> DocumentResult | None:
        result = await self.command(command)
        if result is not None:
            self.notify(said, title="Done")
        return result

    # -- on the section ------------------------------------------------------------------------
    async def _do_edit(self, doc: Document, section: Section) -> None:
        from .edit import EditScreen

        if visible(section.content, multiline=True) != section.content:
            self.notify(
                f"{section.id} holds control characters an editor would show raw: edit it"
                " with `tap edit`.",
                severity="error",
                title="Edit",
            )
            return
        title = f"Edit {section.id} v{section.version} directly: ctrl+s when done"
        content: str | None = await self.app.push_screen_wait(EditScreen(title, section.content))
        if content is None:
            return
        if content == section.content:
            self.notify(f"{section.id} is unchanged: nothing done.", title="Edit")
            return
        why = await self._question(f"Edit {section.id} past the agents: why?")
        if why is not None:
            command = {"op": "edit", "sectionId": section.id, "content": content, "why": why}
            await self._run(command, f"{section.id} edited")

    async def _do_classify(self, doc: Document, section: Section) -> None:
        framework: str | None = None
        if doc.framework is not None:
            levels = list(doc.framework[1])
        else:
            frameworks = await self.workspace.frameworks()
            if not frameworks:
                self.notify(
                    "No classification framework yet: create one first (! f).",
                    severity="warning",
                    title="Classify",
                )
                return
            names = sorted(frameworks)
            framework = names[0]
            if len(names) > 1:
                framework = await self._choose(
                    "The document adopts which framework?",
                    keyed([(f"{n}: {' < '.join(frameworks[n])}", n) for n in names]),
                )
                if framework is None:
                    return
            levels = frameworks[framework]
        now = f" (now {section.classification})" if section.classification else ""
        level = await self._choose(
            f"Classify {section.id}{now}", keyed([(lv, lv) for lv in levels])
        )
        if level is None:
            return
        command: dict[str, Any] = {"op": "classify", "sectionId": section.id, "level": level}
        if framework is not None:
            command.update(framework=framework, levels=levels)
        await self._run(command, f"{section.id} classified {level}")

    async def _do_force_unlock(self, doc: Document, section: Section) -> None:
        from engine.protocol.model import who

        lock = section.lock
        if lock is None:
            self.notify(f"{section.id} is not locked.", severity="warning", title="Unlock")
            return
        holder = who(lock.holder_name, lock.holder_kind)
        why = await self._question(f"Force-unlock {section.id}, held by {holder}: why?")
        if why is not None:
            command = {"op": "unlock", "sectionId": section.id, "why": why}
            await self._run(command, f"{section.id} unlocked")

    async def _do_mark_constraint(self, doc: Document, section: Section) -> None:
        from engine.protocol.model import COMPATIBILITIES

        constraints = [k for k in doc.constraints_of(section.key) if not k.withdrawn]
        if not constraints:
            self.notify(f"No standing constraint on {section.id}.", severity="warning")
            return
        labels = [
            (
                f"{doc.agents[k.author].name if k.author in doc.agents else k.author}:"
                f" {k.boundary} ({k.compatibility})",
                k.id,
            )
            for k in constraints
        ]
        constraint_id = await self._choose(f"Mark which constraint on {section.id}?", keyed(labels))
        if constraint_id is None:
            return
        marks = [Choice(c[0], c, c) for c in COMPATIBILITIES]
        compatibility = await self._choose("It is…", marks)
        if compatibility is None:
            return
        why = await self._question("Why? (kept with the mark)")
        if why is None:
            return
        command = {
            "op": "mark-constraint",
            "constraintId": constraint_id,
            "compatibility": compatibility,
            "why": why,
        }
        await self._run(command, f"constraint marked {compatibility}")

    async def set_disclosure(self, agent: str, level: int) -> None:
        """How much of the others' constraints ``agent`` sees: 1 the boundary, 2 its category."""
        choices = [
            Choice("1", "1: the boundary only" + (" (now)" if level == 1 else ""), "1"),
            Choice("2", "2: the boundary and its category" + (" (now)" if level == 2 else ""), "2"),
        ]
        picked = await self._choose(f"What {visible(agent)} sees of others' constraints", choices)
        if picked is not None:
            command = {"op": "disclosure", "agent": agent, "level": int(picked)}
            await self._run(command, f"{agent} sees disclosure level {picked}")

    # -- on the document -----------------------------------------------------------------------
    async def _do_policy(self, doc: Document, section: Section | None) -> None:
        from engine.protocol.model import POLICIES

        choices = keyed([(p + (" (now)" if p == doc.policy else ""), p) for p in POLICIES])
        policy = await self._choose("The approval policy", choices)
        if policy is None:
            return
        command: dict[str, Any] = {"op": "policy", "policy": policy}
        if policy == "objection-based":
            window = await self._question(
                "Objection window in seconds (1 to 86400)", str(doc.window_s), check=window_problem
            )
            if window is None:
                return
            command["windowSeconds"] = int(window)
        why = await self._question(f"Policy {policy}: why?")
        if why is not None:
            await self._run({**command, "why": why}, f"policy is {policy}")

    async def _do_strategy(self, doc: Document, section: Section | None) -> None:
        from engine.protocol.model import STRATEGIES

        choices = keyed([(s + (" (now)" if s == doc.strategy else ""), s) for s in STRATEGIES])
        strategy = await self._choose("The conflict strategy", choices)
        if strategy is None:
            return
        why = await self._question(f"Strategy {strategy}: why?")
        if why is not None:
            command = {"op": "policy", "strategy": strategy, "why": why}
            await self._run(command, f"strategy is {strategy}")

    async def _do_removal_guard(self, doc: Document, section: Section | None) -> None:
        percent = await self._question(
            "A proposal removing more than this % of its section's lines waits for a human"
            " (0 to 100)",
            str(doc.removal_guard),
            check=percent_problem,
        )
        if percent is None:
            return
        why = await self._question(f"Removal guard {percent}%: why?")
        if why is not None:
            command = {"op": "policy", "removalGuard": int(percent), "why": why}
            await self._run(command, f"removal guard is {percent}%")

    async def _do_lock_document(self, doc: Document, section: Section | None) -> None:
        why = await self._question("Lock the document (agents' proposals are refused): why?")
        if why is not None:
            await self._run({"op": "lock-document", "why": why}, "the document is locked")

    async def _do_unlock_document(self, doc: Document, section: Section | None) -> None:
        from .confirm import ConfirmScreen

        if await self.app.push_screen_wait(ConfirmScreen("Unlock the document?", yes="Unlock")):
            await self._run({"op": "unlock-document"}, "the document is unlocked")

    async def _do_invite(self, doc: Document, section: Section | None) -> None:
        from engine.protocol.model import CONTEXT_MODES, TRUST_LEVELS
        from engine.protocol.results import Invited

        trust = await self._choose(
            "The invited agent's trust", keyed([(t, t) for t in TRUST_LEVELS])
        )
        if trust is None:
            return
        mode = await self._choose("What it may read", keyed([(m, m) for m in CONTEXT_MODES]))
        if mode is None:
            return
        command: dict[str, Any] = {"op": "invite", "trust": trust, "mode": mode}
        if mode in ("SectionScoped", "Neighbourhood"):
            ids = await self._question(
                "The sections it opens (ids, comma-separated)",
                self.section_id or "",
                check=lambda text: sections_problem(doc, text),
            )
            if ids is None:
                return
            command["sections"] = [s.strip() for s in ids.split(",") if s.strip()]
        if doc.framework is not None:
            levels = [("none", "")] + [(lv, lv) for lv in doc.framework[1]]
            clearance = await self._choose("Its clearance", keyed(levels))
            if clearance is None:
                return
            if clearance:
                command["clearance"] = clearance
        ttl = await self._choose(
            "It can be used for", keyed([(label, str(s)) for label, s in INVITE_TTLS])
        )
        if ttl is None:
            return
        command["ttlSeconds"] = int(ttl)
        result = await self._run(command, "invite made")
        if isinstance(result, Invited) and result.token:
            about = f"Invite {result.token_hash[:12]}: {trust}, {mode}, until {result.expires_at}"
            await self.app.push_screen_wait(TokenScreen(result.token, about))

    async def _do_invites(self, doc: Document, section: Section | None) -> None:
        from engine.protocol.views import invite_rows

        while self.shown is not None:
            doc = self.shown.doc
            rows = invite_rows(doc, self.shown.now_ms)
            chosen: str | None = await self.app.push_screen_wait(InvitesScreen(rows))
            if chosen is None:
                return
            if chosen == "new":
                await self._do_invite(doc, section)
                continue
            hashed = chosen.removeprefix("revoke:")
            row = next(r for r in rows if r["tokenHash"] == hashed)
            if row["state"] != "open":
                self.notify(
                    f"Invite {row['invite']} is {row['state']}: only an open invite can be"
                    " revoked.",
                    severity="warning",
                    title="Revoke",
                )
                continue
            why = await self._question(f"Revoke invite {row['invite']}: why?")
            if why is not None:
                command = {"op": "revoke-invite", "invite": hashed, "why": why}
                await self._run(command, f"invite {row['invite']} revoked")

    async def _do_framework(self, doc: Document, section: Section | None) -> None:
        from engine.documents import check_levels
        from engine.protocol.errors import ProtocolError
        from engine.store import StoreError

        known = await self.workspace.frameworks()

        def name_problem(text: str) -> str | None:
            return f"a framework {text.strip()!r} exists already" if text.strip() in known else None

        name = await self._question("The new framework's name", check=name_problem)
        if name is None:
            return

        def levels_problem(text: str) -> str | None:
            try:
                check_levels(name, split_levels(text))
            except ProtocolError as error:
                return str(error)
            return None

        text = await self._question(
            "Its levels, lowest first, comma-separated", "Public, Internal", check=levels_problem
        )
        if text is None:
            return
        levels = split_levels(text)
        try:
            await self.workspace.create_framework(name, levels, human=self.custodian)
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Framework")
            return
        self.notify(f"framework {name}: {' < '.join(levels)}", title="Done")


def split_levels(text: str) -> list[str]:
    return [level.strip() for level in text.split(",") if level.strip()]


def window_problem(text: str) -> str | None:
    value = text.strip()
    if not value.isdigit() or not 1 <= int(value) <= 86_400:
        return f"{value!r}: a whole number of seconds from 1 to 86400"
    return None


def percent_problem(text: str) -> str | None:
    value = text.strip()
    if not value.isdigit() or not 0 <= int(value) <= 100:
        return f"{value!r}: a whole number from 0 to 100"
    return None


def sections_problem(doc: Document, text: str) -> str | None:
    ids = [s.strip() for s in text.split(",") if s.strip()]
    if not ids:
        return "name at least one section"
    unknown = [i for i in ids if doc.by_id.get(i) is None]
    return f"no section {unknown[0]!r}" if unknown else None
