"""What the four TextArena games of LM Playschool 2026's out-of-domain suite share (GAMES-OOD.md section 6).

ta_blackjack, ta_frozen_lake, ta_mastermind and ta_sokoban each wrap one environment of the `textarena` package
(pinned at 0.7.3, the version the official runs used). The environment holds the rules: it parses every move,
keeps the state, writes the game's messages and gives the reward. Playpen's game master passes the player's
answers to `env.step` and the environment's new messages back to the player, without TextArena's wrappers.

One player, one error allowance (TextArena's SinglePlayerState): a move the environment rejects earns a
warning and must be made again in the same round; a second rejected move in a row ends the episode, which
is then aborted. Otherwise the episode ends when the environment says so, with its reward in [0, 1]:
Success when it is 1, never Lose (as the official scorer), Main Score 100 x reward, NaN when aborted.

Randomness. The environments draw their secrets (holes, codes, cards) from the process-wide `random`, which
TextArena reseeds with the instance's seed when an environment is reset. Playpen resets them inside
`isolated_global_random`, which gives the process its generator back afterwards, so an episode changes no
one else's random draws; Blackjack, the one environment that draws after the reset too, gets a generator of
its own (ta_blackjack/master.py).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from clemcore.backends import Model
from clemcore.clemgame import (
    DialogueGameMaster,
    GameBenchmark,
    GameInstanceGenerator,
    GameScorer,
    GameSpec,
    Player,
)
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_LOSE, METRIC_SUCCESS

from playpen.errors import PlaypenError
from playpen.games.common import ExpertPlayer

# The instances' seeds are SEED + game_id (the official instance generator's).
SEED = 525119131
INSTANCES_PER_EXPERIMENT = 10
# The official recordings name the one player "Player 0" (TextArena's player id); Playpen's is "Player 1".
RECORDED_PLAYER = "Player 0"


@contextlib.contextmanager
def isolated_global_random() -> Iterator[None]:
    """Let TextArena reseed and draw from the process-wide `random` inside, then restore its state."""
    saved = random.getstate()
    try:
        yield
    finally:
        random.setstate(saved)


def intro_text(game_dir: Path, experiment: dict) -> str:
    """The game's opening words: the experiment's `intro`, else the packaged template (recorded official
    experiments carry no prompts)."""
    intro = experiment.get("intro")
    if isinstance(intro, str) and intro.strip():
        return intro.strip()
    return (game_dir / "resources" / "en" / "intro.template").read_text(encoding="utf-8").strip()


class TextArenaGameMaster(DialogueGameMaster):
    """Plays one TextArena environment with one player; subclasses name the role, the expert and the env."""

    role: ClassVar[str]
    game_dir: ClassVar[Path]

    @staticmethod
    def expert(messages: list[dict]) -> str:
        raise NotImplementedError

    def make_env(self, specs: dict[str, Any], seed: int) -> Any:
        """The game's TextArena environment, built with the instance's keyword arguments."""
        raise NotImplementedError

    def _on_setup(self, **instance: Any) -> None:
        if not isinstance(instance.get("seed"), int):
            raise PlaypenError(f"{self.game_spec.game_name}: instance {instance.get('game_id')} needs an integer "
                               "seed (the environment draws its board, code or cards from it)")
        self.seed = instance["seed"]
        specs = instance.get("env_specs") or {}
        if not isinstance(specs, dict):
            raise PlaypenError(f"{self.game_spec.game_name}: env_specs must be an object, not {specs!r}")
        try:
            self.env = self.make_env(dict(specs), self.seed)
        except TypeError as e:  # a keyword the environment does not take
            raise PlaypenError(f"{self.game_spec.game_name}: env_specs {specs} do not fit the environment: {e}") from e
        with isolated_global_random():
            self.env.reset(num_players=1, seed=self.seed)
        self.shown = 0  # the player's observations already sent
        self.warned = False  # the last move was rejected with a warning: the round goes on
        self.player = ExpertPlayer(self.player_models[0], self.role, type(self).expert)
        self.add_player(self.player, initial_context=f"{intro_text(self.game_dir, self.experiment)}\n\n{self._news()}")

    def _news(self) -> str:
        """The environment's messages to the player since the last context (not the player's own moves)."""
        import textarena as ta

        observations = self.env.state.observations[0]
        new, self.shown = observations[self.shown:], len(observations)
        # cleandoc: Sokoban's rules are an indented triple-quoted string
        return "\n\n".join(inspect.cleandoc(message) for _, message, kind in new
                           if kind is not ta.ObservationType.PLAYER_ACTION)

    def _parse_response(self, player: Player, response: str) -> str:
        return response  # the environment parses moves: a move it rejects is a warning, not a parse error

    def _advance_game(self, player: Player, response: str) -> None:
        state = self.env.state
        errors = state.error_count
        done, _ = self.env.step(response)
        # a rejected move raises the error count (a valid one resets it); the turn limit may end the game
        # on a rejected move too
        self.warned = state.error_count > errors
        if self.warned:
            self.count_request_violation()
            self.log_to_self("invalid move", "warning: the move must be made again")
        if not done:
            self.set_context_for(player, self._news())
            return
        if state.game_info[0].get("invalid_move"):  # the second rejected move in a row
            self.count_request_violation()
            self.state.abort()
        elif state.rewards[0] == 1:
            self.state.succeed()
        else:
            self.state.failed()
        self.log_to_self("game end", str(state.game_info[0].get("reason", "")))

    def _start_next_round(self) -> bool:
        return not self.warned  # a rejected move is made again in the same round

    def numeric_reward(self) -> float:
        """The environment's reward, or -1 when the episode ended on a rejected move (the official rule)."""
        state = self.env.state
        if state.game_info[0].get("invalid_move"):
            return -1
        return state.rewards[0] if state.rewards else 0.0

    def _on_after_game(self) -> None:
        state = self.env.state
        reward = self.numeric_reward()
        self.log_key("ta_reward", {"0": state.rewards[0] if state.rewards else 0.0})
        self.log_key("ta_reward_details", {"0": {k: v for k, v in state.game_info[0].items()}})
        self.log_key("numeric_reward", reward)
        self.log_key(METRIC_ABORTED, int(reward == -1))
        self.log_key(METRIC_SUCCESS, int(reward == 1))
        self.log_key(METRIC_LOSE, 0)  # the official games never lose: a reward below 1 is a partial score


class TextArenaScorer(GameScorer):
    """Numeric Reward, the raw TextArena reward, and Main Score = 100 x reward (NaN when aborted)."""

    def compute_round_score(self, round_idx: int, round_events: list[dict]) -> None:
        pass  # the request counts are the only round scores

    def compute_episode_scores(self, interactions: dict) -> None:
        reward = interactions.get("numeric_reward", -1)
        self.log_episode_score("Numeric Reward", reward)
        self.log_episode_score("ta_reward", interactions.get("ta_reward"))
        aborted = interactions.get(METRIC_ABORTED) or interactions.get(METRIC_LOSE)
        self.log_episode_score(BENCH_SCORE, math.nan if aborted else 100 * reward)


class TextArenaBenchmark(GameBenchmark):
    """A TextArena game; subclasses name the game master class."""

    master_class: ClassVar[type[TextArenaGameMaster]]

    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> TextArenaGameMaster:
        return self.master_class(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> TextArenaScorer:
        return TextArenaScorer(self.game_name, experiment, game_instance)

    @staticmethod
    def replay_players(recorded_players: dict) -> list[str]:
        """The official recordings name the player after TextArena's id, "Player 0"."""
        names = [name for name in recorded_players if name != "GM"]
        return names[:1] or [RECORDED_PLAYER]


class TextArenaInstanceGenerator(GameInstanceGenerator):
    """The official experiments of a game: one per TextArena environment id with its keyword arguments,
    INSTANCES_PER_EXPERIMENT instances each, seeded SEED + game_id (the same seeds in every experiment)."""

    def __init__(self, game_dir: Path, experiments: dict[str, dict[str, Any]]):
        super().__init__(str(game_dir))
        self.experiments = experiments

    def on_generate(self, seed: int, **kwargs: Any) -> None:
        for name, specs in self.experiments.items():
            experiment = self.add_experiment(name)
            experiment["intro"] = self.load_template("resources/en/intro").strip()
            for game_id in range(INSTANCES_PER_EXPERIMENT):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(env_id=name, env_specs=specs, seed=seed + game_id)


def generate_instances(game_name: str, game_dir: Path, experiments: dict[str, dict[str, Any]]) -> None:
    """Write the game's in/instances.json (`python -m playpen.games.<game>.instancegenerator`)."""
    path = TextArenaInstanceGenerator(game_dir, experiments).generate("instances.json", seed=SEED)
    print(f"{game_name}: {path}")
