"""What each page and screen is sent: a viewer's projection of a battle and the events it catches up
on, and the table display: its settings and the screens paired with it."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from rules import InvalidDeclaration, Viewer

from .desk import UNKNOWN, Desk, NotFound, clean_id, new_token
from .fog import fog_of, read_board
from .models import DISPLAY_DEFAULTS, Battle, DisplayScreen, GameTable, display_settings, row_id, utcnow
from .projection import project
from .store import BattleRecord

#: letters and digits that read unambiguously on a TV (no 0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B, Q)
PAIRING_ALPHABET = "ACDEFHJKMNPRTUVWXY3479"
PAIRING_CODE_LENGTH = 6
#: how long a pairing code stays good while its screen waits to be paired
PAIRING_CODE_LIFETIME = timedelta(minutes=10)
#: unpaired screens whose code is older than this are deleted when new screens come
SCREEN_FORGET_AFTER = timedelta(days=1)


def pairing_code() -> str:
    return "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(PAIRING_CODE_LENGTH))


def clean_pairing_code(raw: Any) -> str:
    """A pairing code as typed: any case, spaces and dashes ignored; refused if it cannot be one."""
    if not isinstance(raw, str):
        raise InvalidDeclaration("a pairing code is needed")
    code = raw.strip().upper().replace(" ", "").replace("-", "")
    if not code:
        raise InvalidDeclaration("a pairing code is needed")
    if len(code) != PAIRING_CODE_LENGTH or any(ch not in PAIRING_ALPHABET for ch in code):
        raise InvalidDeclaration(f"a pairing code is {PAIRING_CODE_LENGTH} letters and digits, as the screen shows it")
    return code


def aware(moment: datetime) -> datetime:
    """A stored time as UTC (SQLite gives it back without its zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def code_expired(screen: DisplayScreen, now: datetime | None = None) -> bool:
    return screen.code is None or (now or utcnow()) - aware(screen.code_at) > PAIRING_CODE_LIFETIME


class ScreenDesk(Desk):
    """The pages' payloads and the table displays."""

    def project(self, battle: Battle | BattleRecord, viewer: Viewer, events: Iterable[Mapping[str, Any]], *,
                undo_offer: Any = UNKNOWN) -> dict[str, Any]:
        """One viewer's payload of a battle (:func:`webapp.projection.project`); for the GM, the step an
        undo would take back now is looked up unless ``undo_offer`` names it."""
        if viewer.is_gm and undo_offer is UNKNOWN:
            undo_offer = self.undo_offer(row_id(battle), battle.version)
        fog = frozenset() if viewer.is_gm else fog_of(read_board(self.engine, battle.table_id)[0])  # (the fog as it is now)
        return project(battle, viewer, events, None if undo_offer is UNKNOWN else undo_offer, fog=fog)

    def snapshot_for(self, battle_id: int, viewer: Viewer, since_v: int = 0) -> dict[str, Any]:
        battle = self.battle(battle_id)
        since = since_v if 0 <= since_v <= battle.version else 0
        return self.project(battle, viewer, self.events_since(battle_id, since))

    def set_shareable(self, battle_id: int, table_id: int, shareable: Any) -> Battle:
        """The GM lets anyone see (or stops showing) the battle once it has ended: replay, report, export."""
        if not isinstance(shareable, bool):
            raise InvalidDeclaration("shareable must be true or false")
        with self.session() as s:
            battle = s.get(Battle, clean_id(battle_id, "battle_id"))
            if battle is None or battle.table_id != table_id:
                raise NotFound("no such battle at this table")
            battle.shareable = shareable
            s.add(battle)
            s.commit()
            s.refresh(battle)
            return battle

    def set_display(self, table_id: int, changes: Any) -> GameTable:
        """Change the table display's settings (``{"show_join": bool, "show_odds": bool}``, either)."""
        if not isinstance(changes, dict) or not changes:
            raise InvalidDeclaration(f"say what to change: {', '.join(DISPLAY_DEFAULTS)} (true or false)")
        for key, value in changes.items():
            if key not in DISPLAY_DEFAULTS:
                raise InvalidDeclaration(f"the display has no setting {str(key)[:40]!r} (only {', '.join(DISPLAY_DEFAULTS)})")
            if not isinstance(value, bool):
                raise InvalidDeclaration(f"{key} must be true or false")
        with self.session() as s:
            table = self._get_table(s, table_id)
            table.display = {**display_settings(table.display), **changes}
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def screens_of(self, table_id: int) -> list[DisplayScreen]:
        with self.session() as s:
            return list(s.exec(select(DisplayScreen).where(DisplayScreen.table_id == table_id).order_by(col(DisplayScreen.id))))

    def screen(self, token: Any) -> DisplayScreen | None:
        """The screen a browser's key names, or None."""
        if not isinstance(token, str) or not 0 < len(token) <= 64:
            return None
        with self.session() as s:
            return s.exec(select(DisplayScreen).where(DisplayScreen.token == token)).first()

    def new_screen(self, label: str) -> DisplayScreen:
        """A screen that wants to become a table display, with a fresh pairing code. Screens whose
        code expired long ago and that never got paired are cleared out on the way."""
        with self.session() as s:
            stale = utcnow() - SCREEN_FORGET_AFTER
            for old in s.exec(select(DisplayScreen).where(col(DisplayScreen.table_id).is_(None), DisplayScreen.code_at < stale)):
                s.delete(old)
            s.commit()
        for _ in range(20):
            screen = DisplayScreen(public_id="d" + secrets.token_hex(5), token=new_token(), code=pairing_code(), label=label[:60])
            with self.session() as s:
                s.add(screen)
                try:
                    s.commit()
                except IntegrityError:
                    continue
                s.refresh(screen)
                return screen
        raise RuntimeError("could not find a free pairing code")

    def renew_code(self, screen: DisplayScreen) -> DisplayScreen:
        """A fresh pairing code for an unpaired screen (its old one expired, or the GM unpaired it)."""
        for _ in range(20):
            with self.session() as s:
                row = s.get(DisplayScreen, screen.id)
                if row is None:
                    raise NotFound("no such screen")
                row.code, row.code_at, row.table_id, row.paired_at = pairing_code(), utcnow(), None, None
                s.add(row)
                try:
                    s.commit()
                except IntegrityError:
                    continue
                s.refresh(row)
                return row
        raise RuntimeError("could not find a free pairing code")

    def pair_screen(self, table_id: int, code: Any) -> DisplayScreen:
        """Make the screen showing ``code`` the display of a table (the GM typed or scanned the code)."""
        wanted = clean_pairing_code(code)
        with self.session() as s:
            self._get_table(s, table_id)
            screen = s.exec(select(DisplayScreen).where(DisplayScreen.code == wanted)).first()
            if screen is None or screen.table_id is not None or code_expired(screen):
                raise NotFound("no screen shows that pairing code (codes expire after 10 minutes: look at the screen again)")
            screen.table_id, screen.paired_at, screen.code = table_id, utcnow(), None
            s.add(screen)
            s.commit()
            s.refresh(screen)
            return screen

    def unpair_screen(self, table_id: int, public_id: Any) -> DisplayScreen:
        """Let a screen go: it shows a new pairing code again."""
        if not isinstance(public_id, str) or not public_id or len(public_id) > 24:
            raise InvalidDeclaration("say which screen to unpair")
        with self.session() as s:
            screen = s.exec(select(DisplayScreen).where(DisplayScreen.public_id == public_id)).first()
            if screen is None or screen.table_id != table_id:
                raise NotFound("no such screen is paired with this table")
            screen.table_id, screen.paired_at, screen.code = None, None, None
            s.add(screen)
            s.commit()
            s.refresh(screen)
            return screen


#: letters and digits that read unambiguously on a TV (no 0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B, Q)
