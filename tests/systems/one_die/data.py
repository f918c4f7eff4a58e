"""The one-die duel's tables as data: its option, its presets and its help."""

from __future__ import annotations

from rules.core import Field

SYSTEM_ID = "one-die"
#: the option: how many hits win the duel
OPTION_FIELDS = (Field("hits_to_win", "Hits to win", "int", 3, 1, 9, help="The first duellist to score this many hits wins."),)
#: ready-made duellists (a duellist has nothing but a name: the die decides)
PRESETS = ({"name": "Ann the Bold"}, {"name": "Bert the Brave"}, {"name": "Cora the Quick"})
HELP = (
    {"title": "The one-die duel", "text": "Each round both duellists roll one die. The higher face hits; a tie "
     "scores nothing. The first to three hits wins."},
    {"title": "Secret rolls", "text": "The first roll of a round stays hidden from the other side until the "
     "second is in. The GM can roll for whoever keeps the table waiting (Roll for the rest)."},
)
