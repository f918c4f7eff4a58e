"""Eclipse Phase's called shots (ruling 11): the aim, whether it came off, the dropped weapon and picking it up.

The words name the aim and whether it came off, never a hidden number.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ... import contract, read
from ...core import Event, State, Viewer, event
from ...dice import DiceSource
from ...errors import IllegalDeclaration, InvalidDeclaration
from .data import BODY_WEAPONS, CALLED_AIMS, SPOT_LENGTH, WEAPONS
from .turns import Turns


def called_aim_of(choices: Mapping[str, Any]) -> str | None:
    """The aim of an attack's called shot, or None (true, in a battle begun before there were aims: bypass armour)."""
    aim = choices.get("called_shot")
    return "armour" if aim is True else aim or None


def called_words(choices: Mapping[str, Any]) -> str:
    """A called shot's aim in the log's words: "to disarm", "at “the eyes”"."""
    aim = called_aim_of(choices)
    if aim == "spot":
        return f"at “{choices.get('called_spot', '')}”"
    return "to bypass the armour" if aim == "armour" else "to disarm"


class CalledShots(Turns):
    """Called shots: what the attack aims at, what comes of it, and taking back a knocked-away weapon."""

    @staticmethod
    def _called_aim(d: Mapping[str, Any]) -> str | None:
        """A called shot's aim (ruling 11), or None; true stands for bypassing armour, the one aim there once was."""
        value = d.get("called_shot")
        if value is None or value is False or value == "none":
            return None
        if value is True:
            return "armour"
        if not isinstance(value, str) or value not in CALLED_AIMS:
            raise InvalidDeclaration(f"called_shot must be one of none, {', '.join(CALLED_AIMS)} (got {value!r})")
        return value

    @staticmethod
    def _called_spot(d: Mapping[str, Any]) -> str:
        spot = d.get("called_spot")
        words = " ".join(spot.split()) if isinstance(spot, str) else ""
        if not words or len(words) > SPOT_LENGTH or not words.isprintable():
            raise InvalidDeclaration(f"called_spot must name the spot in 1 to {SPOT_LENGTH} characters "
                                     "(the head, the gun hand, a sensor)")
        return words

    @staticmethod
    def held_weapon(c: Mapping[str, Any]) -> int | None:
        """The weapon in the combatant's hand, which a disarming called shot knocks away: the one it last attacked
        with, else the first it carries; never a part of its body (fists, grafted claws), never one on the ground."""
        loose = [i for i, w in enumerate(c["weapons"]) if w["id"] not in BODY_WEAPONS and not w.get("dropped_at")]
        return c.get("held") if c.get("held") in loose else (loose[0] if loose else None)

    @staticmethod
    def _called_data(exchange: Mapping[str, Any]) -> dict[str, Any]:
        return {"called_shot": copy.deepcopy(exchange["called_shot"])} if "called_shot" in exchange else {}

    @staticmethod
    def _called_missed(exchange: dict[str, Any], a: Mapping[str, Any]) -> None:
        if "called_shot" in exchange:
            exchange["called_shot"]["text"] = f"{a['name']}'s called shot {exchange['called_shot']['label']} " \
                                              "does not come off."

    def _called_hit(self, exchange: dict[str, Any], a: Mapping[str, Any], t: dict[str, Any], came_off: bool,
                    events: list[Event]) -> None:
        called = exchange["called_shot"]
        called["came_off"] = came_off
        head = f"{a['name']}'s called shot {called['label']}"
        if not came_off:
            called["text"] = f"{head} does not come off: without a superior success it is an ordinary hit."
        elif called["aim"] == "armour":
            called["text"] = f"{head} comes off: the hit slips past {t['name']}'s armour."
        elif called["aim"] == "spot":
            called["text"] = (f"{head} comes off: the hit lands on {t['name']} right there, and the GM rules "
                              "what that does.")
        else:
            index = self.held_weapon(t)
            weapon = t["weapons"][index]
            weapon["dropped_at"] = [t["x"], t["y"]]
            if t.get("held") == index:
                t["held"] = None
            if not any(w["skill"] == "melee" and not w.get("dropped_at") for w in t["weapons"]):
                t["weapons"].append({"id": "unarmed", **copy.deepcopy(WEAPONS["unarmed"])})
            called["weapon"] = weapon["name"]
            called["text"] = (f"{head} comes off: {t['name']} drops the {weapon['name']}, and the hit deals no "
                              "damage.")
        events.append(event("called_shot.came_off" if came_off else "called_shot.failed", called["text"],
                            attacker=a["id"], defender=t["id"], **self._called_data(exchange)))

    @contract.declaration("pick_up")
    def _do_pick_up(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        """A combatant takes back a weapon a called shot knocked from its hand: its complex action for the turn."""
        c = self._combatant(state, d)
        self._require_active(state, c)
        index = read.whole(d, "weapon")
        if not 0 <= index < len(c["weapons"]) or not c["weapons"][index].get("dropped_at"):
            raise IllegalDeclaration(f"{c['name']} has no such weapon on the ground")
        weapon = c["weapons"][index]
        if state["turn"]["complex_used"]:
            raise IllegalDeclaration(f"{c['name']} has already used its complex action this turn")
        if not self._within_reach(c, weapon["dropped_at"]):
            raise IllegalDeclaration(f"the {weapon['name']} lies out of {c['name']}'s reach: move next to it first")
        del weapon["dropped_at"]
        c["held"] = index
        state["turn"]["complex_used"] = True
        state["turn"]["acted"] = True
        events.append(event("weapon.picked_up", f"{c['name']} picks up the {weapon['name']}.", combatant=c["id"],
                            weapon=index))
