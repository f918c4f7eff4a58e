"""The rosters: each GM's library of saved lineups, a table's lineup saved into it and loaded from
it, and the survivors of a finished battle written back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from rules import IllegalDeclaration, InvalidDeclaration, NotPermitted, get_system

from .desk import Desk, NotFound, clean_id, clean_name, rules_guard
from .models import Battle, GameTable, Roster, RosterCombatant, row_id, table_of
from .tables import board_settings
from .text import scrub

#: the most rosters one library (one GM's browser) may hold, over every rule system
MAX_ROSTERS = 100


class RosterDesk(Desk):
    """The roster libraries."""

    def rosters(self, system_id: str, library: str) -> list[dict[str, Any]]:
        """The saved rosters of a rule system in one library, newest first: each one's name and how
        many combatants it holds (the GM's table payload carries them, sent again whenever the table
        changes, so not the lineups themselves: ``roster_load`` reads one when the GM loads it)."""
        roster, member = table_of(Roster), table_of(RosterCombatant)
        query = (
            sa_select(roster.c.id, roster.c.name, func.count(member.c.id))
            .select_from(roster.outerjoin(member, member.c.roster_id == roster.c.id))
            .where(roster.c.system_id == system_id, roster.c.library == library)
            .group_by(roster.c.id, roster.c.name)
            .order_by(roster.c.id.desc())
        )
        with self.engine.connect() as conn:
            return [{"id": roster_id, "name": scrub(name), "size": size} for roster_id, name, size in conn.execute(query)]

    @staticmethod
    def _library_room(s: Session, library: str) -> None:
        """A library holds at most :data:`MAX_ROSTERS` rosters: a new one past that is refused."""
        count = s.exec(select(func.count()).select_from(Roster).where(col(Roster.library) == library)).one()
        if count >= MAX_ROSTERS:
            raise IllegalDeclaration(f"your roster library is full ({MAX_ROSTERS} rosters): delete one first, or save over one")

    def save_roster(self, table_id: int, name: Any) -> Roster:
        roster_name = clean_name(name, "roster name", 80)
        with self.session() as s:
            table = self._get_table(s, table_id)
            if not table.lineup:
                raise IllegalDeclaration("the lineup is empty: add combatants before saving a roster")
            self._library_room(s, table.library)
            roster = Roster(name=roster_name, system_id=table.system_id, library=table.library)
            s.add(roster)
            s.flush()
            looks = board_settings(table.board)["tokens"]
            for position, entry in enumerate(table.lineup):
                stats = {k: v for k, v in entry.items() if k not in ("seat",)}
                if entry.get("id") in looks:  # the token's colour and portrait travel with it
                    stats["_token"] = looks[entry["id"]]
                # (scrubbed: a lineup stored before the board read every field may hold a broken character)
                s.add(RosterCombatant(roster_id=row_id(roster), position=position, name=scrub(entry["name"]), stats=scrub(stats)))
            table.roster_id = roster.id  # the lineup is now this roster's: survivors may go back into it
            s.add(table)
            s.commit()
            s.refresh(roster)
            return roster

    def load_roster(self, table_id: int, roster_id: Any, *, append: bool = False) -> GameTable:
        if not isinstance(roster_id, int) or isinstance(roster_id, bool):
            raise InvalidDeclaration("pick a roster")
        roster_id = clean_id(roster_id, "roster_id")
        with self.session() as s:
            table = self._get_table(s, table_id)
            roster = self._library_roster(s, table, roster_id)
            if roster.system_id != table.system_id:
                raise IllegalDeclaration("that roster belongs to another rule system")
            members = s.exec(
                select(RosterCombatant).where(RosterCombatant.roster_id == roster.id).order_by(col(RosterCombatant.position))
            ).all()
            entries = [dict(m.stats) for m in members]
            carried = [(entry, entry.pop("_token", None)) for entry in entries]
            for entry in entries:
                if entry.get("controller") == "seat":
                    entry["controller"], entry["seat"] = "gm", None
            lineup = (list(table.lineup) if append else []) + entries
            taken = set()
            for i, entry in enumerate(lineup):
                if not entry.get("id") or entry["id"] in taken:
                    entry["id"] = f"c{i + 1}"
                    while entry["id"] in taken:
                        entry["id"] += "x"
                taken.add(entry["id"])
            table.lineup = get_system(table.system_id).validate_draft(lineup)
            board = board_settings(table.board)
            if not append:
                board["tokens"] = {}
            for entry, look in carried:
                if isinstance(look, dict):
                    board["tokens"][entry["id"]] = look
            table.board = board
            # where the lineup came from (survivors go back there); a lineup mixed from two is nobody's
            table.roster_id = roster.id if not append or not [e for e in lineup if e not in entries] else None
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def lineup_roster(self, table_id: int) -> int | None:
        """The roster the table's lineup came from (read afresh: a table read for a new battle on
        PostgreSQL carries only the columns the battle needs)."""
        with self.engine.connect() as conn:
            return conn.execute(sa_select(table_of(GameTable).c.roster_id).where(table_of(GameTable).c.id == table_id)).scalar()

    def _ended_battle_of(self, table_id: int, battle_id: Any) -> Battle:
        battle = self.battle(battle_id)
        if battle.table_id != table_id:
            raise NotPermitted("that battle is not at your table")
        if battle.status != "ended":
            raise IllegalDeclaration("the battle is still running: end it first, then write its survivors back")
        return battle

    def survivors(self, table_id: int, battle_id: Any, *, fallen: bool = False) -> tuple[list[str], list[str], list[str]]:
        """Who would carry on from a finished battle and who would be left behind, as
        :meth:`save_survivors` would write them (nothing is written); and who fell but lives (carried
        only with ``fallen``). Three lists of names."""
        from rules.carry_over import carry_over

        battle = self._ended_battle_of(table_id, battle_id)
        lineup = [dict(e) for e in self.table(table_id=table_id).lineup]
        with rules_guard("carry-over"):
            entries, left_out = carry_over(battle.state, lineup, fallen=fallen)
            standing, _ = carry_over(battle.state, lineup)
            with_fallen, _ = carry_over(battle.state, lineup, fallen=True)
        up = {e["id"] for e in standing}
        return [str(e["name"]) for e in entries], left_out, [str(e["name"]) for e in with_fallen if e["id"] not in up]

    def save_survivors(self, table_id: int, battle_id: Any, *, roster_id: Any = None, name: Any = None,
                       load: bool = True, fallen: bool = False) -> tuple[Roster, list[dict[str, Any]], list[str]]:
        """Write the survivors of a finished battle into a roster of the table's library: a new one
        (``name``) or over an existing one (``roster_id``, usually the one the lineup came from), with
        each survivor's state at the end (:func:`rules.carry_over.carry_over`): those still standing,
        and with ``fallen`` those who fell but live. ``load``: the table's lineup becomes the
        survivors too, so the next battle starts where this one stopped. Returns the roster, the
        survivors' lineup entries and the names left out (the defeated)."""
        from rules.carry_over import carry_over

        if (roster_id is None) == (name is None):
            raise InvalidDeclaration("say where the survivors go: a new roster's name, or the roster_id to write over")
        battle = self._ended_battle_of(table_id, battle_id)
        roster_name = clean_name(name, "roster name", 80) if name is not None else None
        if roster_id is not None:
            if not isinstance(roster_id, int) or isinstance(roster_id, bool):
                raise InvalidDeclaration("roster_id must be a number")
            roster_id = clean_id(roster_id, "roster_id")
        with self.session() as s:
            table = self._get_table(s, table_id)
            system = get_system(table.system_id)
            if system.id != battle.system_id:
                raise IllegalDeclaration("this table now plays another rule system")
            with rules_guard("carry-over"):
                entries, left_out = carry_over(battle.state, [dict(e) for e in table.lineup], fallen=fallen)
                entries = system.validate_draft(entries) if entries else entries
            if not entries:
                raise IllegalDeclaration("nobody is left standing: there is no one to write back"
                                         + ("" if fallen else " (tick “Also carry on those who fell but live” to carry the fallen)"))
            if roster_id is not None:
                roster = self._library_roster(s, table, roster_id)
                if roster.system_id != table.system_id:
                    raise IllegalDeclaration("that roster belongs to another rule system")
                for member in s.exec(select(RosterCombatant).where(RosterCombatant.roster_id == roster.id)):
                    s.delete(member)
                s.flush()
            else:
                self._library_room(s, table.library)
                roster = Roster(name=roster_name or "", system_id=table.system_id, library=table.library)
                s.add(roster)
                s.flush()
            looks = board_settings(table.board)["tokens"]
            for position, entry in enumerate(entries):
                stats = {k: v for k, v in entry.items() if k != "seat"}
                if entry.get("id") in looks:
                    stats["_token"] = looks[entry["id"]]
                # (scrubbed: a lineup stored before the board read every field may hold a broken character)
                s.add(RosterCombatant(roster_id=row_id(roster), position=position, name=scrub(entry["name"]), stats=scrub(stats)))
            if load:
                table.lineup = entries
                table.roster_id = roster.id
                s.add(table)
            s.commit()
            s.refresh(roster)
            return roster, entries, left_out

    def delete_roster(self, table_id: int, roster_id: Any) -> None:
        if not isinstance(roster_id, int) or isinstance(roster_id, bool):
            raise InvalidDeclaration("pick a roster")
        roster_id = clean_id(roster_id, "roster_id")
        with self.session() as s:
            roster = self._library_roster(s, self._get_table(s, table_id), roster_id)
            for member in s.exec(select(RosterCombatant).where(RosterCombatant.roster_id == roster_id)):
                s.delete(member)
            s.flush()
            s.delete(roster)
            s.commit()

    @staticmethod
    def _library_roster(s: Session, table: GameTable, roster_id: int) -> Roster:
        """A roster of the table's library; another library's answers as a missing one does, so a
        GM of another table can neither use nor probe it."""
        roster = s.get(Roster, roster_id)
        if roster is None or roster.library != table.library:
            raise NotFound("no such roster")
        return roster
