"""The 24 toh_multi_turn instances of the LM Playschool 2026 out-of-domain evaluation.

    python -m playpen.games.toh_multi_turn.instancegenerator

One instance (game_id 0) per experiment `toh_<n>_disks_<align>_<names>_<order>`: 3, 4 or 5 disks; the board
drawn as one text line per peg (vertical) or as stacks (horizontal); pegs A B C with numbered disks (alpha)
or pegs 1 2 3 with lettered disks (num); disk labels counted up from the bottom disk (ascending) or from
the top one (descending). Each has 2^(n+1) turns, twice the optimal 2^n - 1 moves plus two. Nothing is
random: the experiments are the official ones by construction.
"""

from __future__ import annotations

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.toh_multi_turn import master, rules

DISKS = (3, 4, 5)
ALIGNS = ("horizontal", "vertical")
PEG_NAMES = ("alpha", "num")
ORDERS = ("ascending", "descending")


class TowerOfHanoiInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(master.RESOURCES.parents[1]))

    def on_generate(self, seed: int, **kwargs) -> None:
        prompts = master.packaged_prompts()
        for disks in DISKS:
            for align in ALIGNS:
                for names in PEG_NAMES:
                    for order in ORDERS:
                        experiment = self.add_experiment(f"toh_{disks}_disks_{align}_{names}_{order}")
                        experiment["prompts"] = prompts
                        experiment["move_pattern"] = rules.MOVE.pattern
                        instance = self.add_game_instance(experiment, 0)
                        instance.update(num_disks=disks, align=align, peg_names=names, disk_order=order,
                                        max_turns=2 ** (disks + 1), optimal_moves=2 ** disks - 1)
                        board = rules.Board.start(disks, names, order)
                        instance["initial_board"] = board.render(align)


if __name__ == "__main__":
    print(TowerOfHanoiInstanceGenerator().generate("instances.json", seed=0))
