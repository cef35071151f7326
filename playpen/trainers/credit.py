"""Credit assignment for online GRPO: episode rewards, per-turn returns and per-token advantages.

`EpisodeReward` turns an episode's outcome (and optionally the game's own per-turn scores) into each turn's
return; `token_advantages` baselines those returns per group, role and turn and scales them per game;
`importance_weights` corrects samples played with older weights (an asynchronous rollout). `PlaypenGRPOTrainer`
(grpo.py) applies them; they are plain functions so that tests and other trainers can use them alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import torch

from playpen.engine import EpisodeResult
from playpen.engine.results import UNSCORED
from playpen.errors import PlaypenError

# The games' own per-turn scores (clemcore round scores) and their best value, for turn-level rewards.
TURN_SCORES: dict[str, tuple[str, float]] = {
    "wordle": ("closeness score", 25.0),
    "wordle_withclue": ("closeness score", 25.0),
    "wordle_withcritic": ("closeness score", 25.0),
    "imagegame": ("F1", 100.0),
    "taboo": ("Accuracy", 1.0),
    "privateshared": ("Accuracy", 1.0),
    "guesswhat": ("Accuracy", 1.0),
    "textmapworld": ("efficient_move", 1.0),
    "textmapworld_graphreasoning": ("efficient_move", 1.0),
    "textmapworld_specificroom": ("efficient_move", 1.0),
}


@dataclass
class EpisodeReward:
    """How an episode's outcome (and, optionally, its turns) becomes the learner's reward.

    kind "main_score": Main Score / 100 (0 when lost); "success": 1 for a win, else 0. Episodes the learner
    aborted (its answer broke the game's format) get `abort_penalty`. With `turn_weight` > 0 each learner turn
    also earns the game's own score for it (TURN_SCORES, scaled to 0-1) times `turn_weight`.
    """

    kind: str = "main_score"
    abort_penalty: float = 0.0
    turn_weight: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("main_score", "success"):
            raise PlaypenError(f"reward {self.kind!r} is unknown: choose main_score or success")

    def __call__(self, result: EpisodeResult) -> float:
        if result.outcome == UNSCORED:  # a reward of 0 for every episode would train on nothing, silently
            raise PlaypenError(f"{result.task.game_name} has no scorer, so its episodes have no reward: train "
                               "GRPO on games that score their episodes")
        if result.outcome == "aborted":
            return self.abort_penalty
        if self.kind == "success":
            return float(result.outcome == "success")
        score = result.main_score
        return 0.0 if math.isnan(score) else score / 100.0

    def turn_scores(self, result: EpisodeResult, player: str) -> list[float]:
        """The game's score (0-1) of each of the player's turns, by the round it was played in; 0 where the game
        logs none."""
        trajectory = result.player(player)
        metric, best = TURN_SCORES.get(result.task.game_name, (None, 1.0))
        scores = []
        for turn in trajectory.turns:
            value = (result.round_scores.get(str(turn.round)) or {}).get(metric) if metric else None
            scores.append(0.0 if value is None or not isinstance(value, (int, float)) or math.isnan(value)
                          else float(value) / best)
        return scores

    def turn_returns(self, result: EpisodeResult, player: str) -> list[float]:
        """Each of the player's turns' return: the episode reward, plus `turn_weight` times the mean turn score
        from that turn to the end (so a turn is credited with what follows it, never with what came before)."""
        outcome = self(result)
        scores = self.turn_scores(result, player) if self.turn_weight else []
        n = len(result.player(player).turns)
        if not scores:
            return [outcome] * n
        return [outcome + self.turn_weight * sum(scores[t:]) / n for t in range(n)]


def learner_at_fault(result: EpisodeResult, learner_players: set[str]) -> bool:
    """Whether an episode's outcome may be held against the learner: not when it was aborted by another
    player's answer or ended by an error (a partner's API failing, a game bug)."""
    if result.error:
        return False
    if result.outcome != "aborted":
        return True
    return result.last_player in learner_players


def episode_reward(completions, episode_reward, **kwargs) -> list[float]:
    """TRL reward function: the reward GameRollout computed from each episode's outcome (what TRL logs as
    `reward`; the advantages are Playpen's, see `token_advantages`)."""
    return [float(r) for r in episode_reward]


@dataclass
class Sample:
    """What the advantage computation needs of one rollout sample."""

    returns: list[float]  # per completion token: the return of the turn it belongs to
    turns: list[int]  # per completion token: which of the player's turns it belongs to
    group: str
    role: str
    game: str
    counts: bool = True


class GameScale:
    """A running standard deviation of each game's returns (Welford), which advantages are divided by so that
    games with different score ranges weigh alike; never below `floor` (a game whose returns have not varied
    yet would otherwise blow its first differences up)."""

    def __init__(self, floor: float = 0.05):
        self.floor = floor
        self.stats: dict[str, tuple[int, float, float]] = {}

    def update(self, game: str, values: list[float]) -> None:
        n, mean, m2 = self.stats.get(game, (0, 0.0, 0.0))
        for x in values:
            n += 1
            delta = x - mean
            mean += delta / n
            m2 += delta * (x - mean)
        self.stats[game] = (n, mean, m2)

    def __call__(self, game: str) -> float:
        n, _, m2 = self.stats.get(game, (0, 0.0, 0.0))
        return max(math.sqrt(m2 / (n - 1)) if n > 1 else 0.0, self.floor)


def token_advantages(samples: list[Sample], scale: GameScale | None = None) -> tuple[list[list[float]], int, int]:
    """Per-token advantages: each token's return minus the mean return of the same group, role and turn (the
    k-th turn of every sample that has one), divided by its game's scale. Samples that do not count get zeros.
    Returns the advantages, how many (group, role) sets there were and how many had no variance at all
    (nothing to learn from)."""
    scale = scale or GameScale()
    sets: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, sample in enumerate(samples):
        if sample.counts:
            sets[(sample.group, sample.role)].append(i)
    turn_returns = [_per_turn(s) for s in samples]
    for members in sets.values():
        scale.update(samples[members[0]].game, [turn_returns[i][0] for i in members if 0 in turn_returns[i]])
    advantages = [[0.0] * len(s.returns) for s in samples]
    flat = 0
    for members in sets.values():
        per_turn: dict[int, list[float]] = defaultdict(list)
        for i in members:
            for turn, value in turn_returns[i].items():
                per_turn[turn].append(value)
        baselines = {turn: sum(v) / len(v) for turn, v in per_turn.items()}
        if all(max(v) - min(v) < 1e-9 for v in per_turn.values()):
            flat += 1
        for i in members:
            game_scale = scale(samples[i].game)
            advantages[i] = [(r - baselines[t]) / game_scale for r, t in zip(samples[i].returns, samples[i].turns)]
    return advantages, len(sets), flat


def _per_turn(sample: Sample) -> dict[int, float]:
    """The return of each of the sample's turns, by turn."""
    values: dict[int, float] = {}
    for turn, value in zip(sample.turns, sample.returns):
        values.setdefault(turn, value)
    return values


IMPORTANCE_SAMPLING_MODES = ("token_truncate", "token_mask", "sequence_truncate", "sequence_mask")


def importance_weights(current: torch.Tensor, sampling: torch.Tensor, mask: torch.Tensor,
                       mode: str = "token_truncate", low: float | None = None, high: float | None = 3.0
                       ) -> torch.Tensor:
    """The importance-sampling correction TRL applies to vLLM samples, for samples another policy drew:
    pi_current / pi_sampling per token (`token_*` modes, shape (B, T)) or per sequence (`sequence_*`, the
    product over its tokens, shape (B, 1)), truncated to [low, high] (`*_truncate`) or set to 0 outside it
    (`*_mask`). Tokens outside `mask`, or whose sampling log-prob is unknown (NaN), count as a ratio of 1."""
    diff = torch.nan_to_num((current - sampling) * mask, nan=0.0)
    if mode not in IMPORTANCE_SAMPLING_MODES:
        raise PlaypenError(f"importance sampling mode {mode!r} is unknown: choose {', '.join(IMPORTANCE_SAMPLING_MODES)}")
    level, _, bound = mode.partition("_")
    ratio = torch.exp(diff.sum(-1, keepdim=True) if level == "sequence" else diff)
    if bound == "truncate":
        return torch.clamp(ratio, min=low, max=high)
    outside = (ratio < (-math.inf if low is None else low)) | (ratio > (math.inf if high is None else high))
    return ratio.masked_fill(outside, 0.0)
