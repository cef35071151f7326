"""cryptolect (LM Playschool 2026 OOD): the realiser, probes, answers, grading, game flow, instances, expert."""

from __future__ import annotations

import copy
import json
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playpen.games.cryptolect import expert, instancegenerator, rules
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted
from tests.conftest import RECORDED_MODELS

GAME = "cryptolect"

STEMS = {"dog": "tonile", "bird": "nevo", "king": "vavu", "red": "minivo", "big": "lina", "see": "meta",
         "hold": "holanu"}


def language(**grammar) -> rules.Language:
    settings_ = {"order": "SOV", "adjective_position": "post", "numeral_position": "post",
                 "definite_type": rules.PARTICLE_BEFORE, "definite_form": "lo", "plural": rules.Affix("fixed", "pu"),
                 "definiteness": True} | grammar
    return rules.Language(STEMS, {2: "himu", 3: "he"}, ("dog", "bird", "king"), ("red", "big"), ("see", "hold"),
                          (1, 2, 3), **settings_)


def meaning(text: str, lang: rules.Language | None = None) -> dict:
    return rules.read_probe(text, lang or language())


def case(name: str = "basic", game_id: int = 0) -> dict:
    experiment, instance = next((e, i) for e, i in instances_of(GAME) if e["name"] == name and i["game_id"] == game_id)
    return {"experiment": experiment, "instance": copy.deepcopy(instance)}


# ---------------------------------------------------------------------------------------------- realiser


@pytest.mark.parametrize("grammar,english,said", [
    ({}, "the two red dogs see a bird", "lo tonilepu minivo himu nevo meta"),
    ({"order": "VSO"}, "a dog see the three birds", "meta tonile lo nevopu he"),
    ({"adjective_position": "pre", "numeral_position": "pre"}, "two big dogs hold a red king",
     "himu lina tonilepu minivo vavu holanu"),
    ({"definite_type": rules.SUFFIX, "definite_form": "ka"}, "the two dogs see the bird", "tonilepuka himu nevoka meta"),
    ({"definite_type": rules.PARTICLE_AFTER}, "the dog see the king", "tonile lo vavu lo meta"),
    ({"definiteness": False}, "the dog see the king", "tonile vavu meta"),  # no definiteness: 'the' is silent
])
def test_realiser(grammar, english, said):
    lang = language(**grammar)
    assert rules.realize(lang, meaning(english, lang)) == said


def test_realiser_with_case_agreement_concord_and_vowel_harmony():
    harmonic = rules.Affix("harmonic", cons="r", front="e", back="o")
    lang = language(order="SVO", case=True, agreement=True, concord=True, nominative=rules.Affix("fixed", "sa"),
                    accusative=harmonic, verb_plural=harmonic, plural=rules.Affix("fixed", "pi"))
    # plural + nominative on subject words, the accusative's vowel follows the stem's last vowel
    said = rules.realize(lang, meaning("the two red dogs see a bird", lang))
    assert said == "lo tonilepisa minivopisa himu metaro nevoro"
    assert harmonic.after("tonile") == "re" and harmonic.after("meta") == "ro" and harmonic.after("prk") == "ro"


def test_english_round_trips():
    lang = language()
    for text in ("the two red dogs see a bird", "three birds hold the big king", "a king see a dog"):
        assert rules.english(meaning(text, lang)) == text


# ------------------------------------------------------------------------------------------------ probes


@pytest.mark.parametrize("text", [
    "The two red dogs see a bird.", '"a dog see a bird"', "two dogs, see: three birds", "the red big dog see a king",
])
def test_probes_that_read(text):
    assert rules.is_probe(text, language())


@pytest.mark.parametrize("text,why", [
    ("", "empty"), ("a dog see a bird hold", "exactly one verb"), ("a dog a bird", "exactly one verb"),
    ("a cat see a bird", "not one of the nouns"), ("a two dogs see a bird", "'a' does not go with"),
    ("dogs see a bird", "needs a number word"), ("a dog red see a bird", "does not belong"),
    ("see a bird", "subject is missing"), ("a dog see the red", "has no noun"),
    ("four dogs see a bird", "not one of the nouns"),  # 'four' is not in play in this language
])
def test_probes_that_are_malformed(text, why):
    with pytest.raises(rules.MalformedProbe, match=why):
        rules.read_probe(text, language())


def test_normalize():
    assert rules.normalize('  "Lo Tonile-pu!"  ') == "lo tonile pu"
    assert rules.normalize("`meta`\n nevo") == "meta nevo"
    assert rules.grade(["  'LO tonile'", "lo tonilé"], ["lo tonile", "lo tonile"]) == [True, False]


def test_the_probes_block_runs_to_the_end_of_the_answer():
    lang = language()
    text = "THOUGHTS: hm\nprobes: a dog see a bird\n2. the dog see a bird\n\n- two dogs see a king\nDone!"
    assert rules.probes_of(text, lang, 3) == ["a dog see a bird", "the dog see a bird", "two dogs see a king",
                                              "Done!"]  # trailing commentary is a probe too
    # a heading counts as a probe too (one '*' is taken for a list marker)
    assert rules.probes_of("PROBES:\n**Round 1**\n1. a dog see a bird", lang, 3) == ["*Round 1**",
                                                                                    "a dog see a bird"]
    # without the label only the lines that read as probes count, at most a round's worth
    text = "Let me ask:\n1. a dog see a bird\n2. the king hold a bird\n3. nonsense\n4. a bird see a dog\n5. a king see a dog"
    assert rules.probes_of(text, lang, 3) == ["a dog see a bird", "the king hold a bird", "a bird see a dog"]


def test_exam_answers():
    ten = [f"word{i}" for i in range(10)]
    assert rules.answers_of("ANSWERS:\n" + "\n".join(f"{i}. {w}" for i, w in enumerate(ten, 1)), 10) == ten
    assert rules.answers_of("Here:\n" + "\n".join(f"{i}) {w}" for i, w in enumerate(ten, 1)), 10) == ten
    assert rules.answers_of("\n\n".join(ten), 10) == ten  # exactly ten non-blank lines
    assert rules.answers_of("intro\n" + "\n".join(ten), 10) == []  # eleven lines, none numbered
    assert rules.answers_of("Answers: a\nb", 10) == ["a", "b"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=150))
def test_any_text_gives_lists_of_probes_and_answers(text):
    lang = language()
    probes = rules.probes_of(text, lang, 3)
    assert all(isinstance(p, str) and p for p in probes)
    if rules.labelled_block(text, "PROBES") is None:  # found without the label: well-formed ones only
        assert len(probes) <= 3 and all(rules.is_probe(p, lang) for p in probes)
    assert all(isinstance(a, str) for a in rules.answers_of(text, 10))
    rules.render_translations(lang, probes)


# ----------------------------------------------------------------------------------------------- game flow


def probes(*sentences: str) -> str:
    return "PROBES:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, 1))


def answers(items: list[str]) -> str:
    return "ANSWERS:\n" + "\n".join(f"{i}. {a}" for i, a in enumerate(items, 1))


def test_a_whole_episode_the_exam_comes_with_the_last_translations_and_the_stored_key_is_the_truth():
    c = case()
    nouns, verbs = c["instance"]["language"]["active_nouns"], c["instance"]["language"]["active_verbs"]
    good = f"a {nouns[0]} {verbs[0]} a {nouns[1]}"
    c["instance"]["exam_targets"] = [f"key {i}" for i in range(10)]  # the instance's answer key decides
    result = play_scripted(GAME, [probes(good, "a cat see a dog"), probes(good), probes(good), probes(good),
                                  answers([f"KEY {i}!" for i in range(10)])], **c)
    scores = result.episode_scores
    assert result.outcome == "success" and scores["Main Score"] == 100 and scores["Probes Used"] == 5
    assert scores["Malformed Probes"] == 1 and result.round_scores[0]["Malformed Probes"] == 1
    turns = result.player("Player 1").turns
    assert "MALFORMED" in turns[1].messages[-1]["content"] and "EXAM" not in turns[3].messages[-1]["content"]
    last = turns[4].messages[-1]["content"]
    assert last.index("The informant says") < last.index("EXAM.")


def test_a_partly_right_exam_is_a_loss_scored_in_tens():
    c = case("standard")
    targets = c["instance"]["exam_targets"]
    result = play_scripted(GAME, [probes("a dog see a bird")] * 5 + [answers(targets[:3] + ["no"] * 7)], **c)
    scores = result.episode_scores
    assert result.outcome == "failure" and scores["Main Score"] == 30 and scores["Exam Correct"] == 3
    assert 0 < scores["Token Similarity"] < 1


def test_too_many_probes_or_none_are_reprompted_once_per_round():
    c = case()
    result = play_scripted(GAME, [probes("a", "b", "c", "d"), "nothing here", probes("a"), "", "x"], **c)
    assert result.outcome == "aborted" and result.episode_scores["Violated Request Count"] == 2
    reprompt = result.player("Player 1").turns[1].messages[-1]["content"]
    assert "4 probes were sent, at most 3" in reprompt
    assert math.isnan(result.episode_scores["Main Score"])
    result = play_scripted(GAME, [probes("a"), "", "x"], **c)
    assert result.outcome == "aborted" and result.episode_scores["Violated Request Count"] == 2


def test_the_fourth_error_of_an_episode_aborts_even_as_the_first_of_its_round():
    c = case()  # basic: 4 rounds of questions
    result = play_scripted(GAME, ["", probes("a"), "", probes("a"), "", probes("a"), probes("a"), "only one line"],
                           **c)
    assert result.outcome == "aborted" and result.episode_scores["Violated Request Count"] == 4
    assert "EXAM" in result.player("Player 1").turns[-1].messages[-1]["content"]


# --------------------------------------------------------------------------------------------- instances


def test_instances_follow_the_2026_experiments():
    for experiment, instance in instances_of(GAME):
        lang = rules.Language.read(instance["language"])
        assert lang.as_dict() == instance["language"]
        assert experiment["probe_budget"] == experiment["num_rounds"] * experiment["probes_per_round"]
        assert instance["exam_targets"] == [rules.realize(lang, m) for m in instance["exam"]]
        assert instance["exam_english"] == [rules.english(m) for m in instance["exam"]]
        assert len(set(instance["exam_targets"])) == 10
        if experiment["has_seed"]:  # the examples show every word in play
            shown = {w for m in instance["seed_corpus"] for w in rules.english(m).split()}
            assert set(lang.nouns) | set(lang.adjectives) | set(lang.verbs) | set(lang.number_words) <= \
                {w.removesuffix("s") for w in shown} | shown
        else:
            assert instance["seed_corpus"] == []


def test_the_generator_redraws_the_shipped_instances():
    generator = instancegenerator.CryptolectInstanceGenerator()
    generator.on_generate(instancegenerator.SEED)
    assert generator.instances == json.loads((rules.GAME_DIR / "in" / "instances.json").read_text())


@pytest.mark.parametrize("model", RECORDED_MODELS)
def test_the_shipped_instances_are_the_recorded_ones_and_the_realiser_says_every_recorded_answer(ood_dir, model):
    ours = {(e["name"], i["game_id"]): i for e, i in instances_of(GAME)}
    files = sorted(ood_dir.glob(f"{model}/{GAME}/*/instance_*/instance.json"))
    assert len(files) == 30
    for file in files:
        theirs = json.loads(file.read_text())
        assert theirs == ours[file.parents[1].name, theirs["game_id"]], file
        lang = rules.Language.read(theirs["language"])
        assert [rules.realize(lang, m) for m in theirs["exam"]] == theirs["exam_targets"]


# ------------------------------------------------------------------------------------------------ expert


@pytest.mark.slow
def test_expert_passes_every_exam():
    results = play_expert(GAME)
    assert len(results) == 30
    # measured: 30 of 30 won with Main Score 100 (and 60 of 60 on the instances of seeds 1 and 2)
    assert all(r.outcome == "success" and r.episode_scores["Main Score"] == 100 for r in results)
    assert all(r.episode_scores["Malformed Probes"] == 0 for r in results)


def test_expert_learns_an_unseen_language_from_its_probes_alone():
    result = play(GAME, expert_answer, **case("unguided", 7))
    assert result.outcome == "success"
    assert result.episode_scores["Probes Used"] <= 20


def test_expert_keeps_only_the_grammars_the_translations_allow():
    lang = language(order="VOS", adjective_position="pre", definite_type=rules.SUFFIX, definite_form="ka")
    seen = [(meaning(t, lang), rules.realize(lang, meaning(t, lang)).split())
            for t in ("the two red dogs see a bird", "a bird hold the three kings", "a king see two big birds",
                      "the dog hold a king")]
    fits = [f for f in (expert.fit(g, seen) for g in expert.Notebook(lang, 3, seen, set()).grammars()) if f]
    assert {f.grammar for f in fits} == {expert.Grammar("VOS", "pre", "post", rules.SUFFIX)}
    found = fits[0]
    assert found.plural == "pu" and found.suffix == "ka" and found.stems["dog"] == "tonile"
    new = meaning("the three big birds hold the dog", lang)
    assert " ".join(found.say(new)) == rules.realize(lang, new)


ANSWERS = st.one_of(
    st.text(max_size=100),
    st.builds(lambda head, lines: head + "\n".join(lines), st.sampled_from(["PROBES:\n", "ANSWERS:\n", "", "1. "]),
              st.lists(st.sampled_from(["a dog see a bird", "the two dogs see a king", "1. x", "", "- y"]),
                       max_size=12)),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_answers_never_raise_and_scores_stay_consistent(data):
    pairs = instances_of(GAME)
    experiment, instance = pairs[data.draw(st.integers(0, len(pairs) - 1), label="instance")]

    def respond(request):
        return expert_answer(request) if data.draw(st.booleans(), label="expert") else data.draw(ANSWERS)

    result = play(GAME, respond, experiment=experiment, instance=instance)
    scores = result.episode_scores
    assert result.error is None, result.error
    assert scores["Aborted"] + scores["Success"] + scores["Lose"] == 1
    if not scores["Aborted"]:
        assert scores["Main Score"] == 10 * scores["Exam Correct"]
        assert scores["Probes Used"] <= experiment["probe_budget"]


def test_expert_answers_any_chat_it_cannot_read_with_a_well_formed_round():
    rng = random.Random(0)
    for _ in range(20):
        text = "".join(rng.choice("abc PROBES:\n1.") for _ in range(rng.randrange(60)))
        assert expert.respond([{"role": "user", "content": text}]).startswith("PROBES:")


def test_expert_passes_the_recorded_exams_in_the_official_wording(ood_dir, tmp_path):
    experiments: dict[str, dict] = {}
    for path in sorted(ood_dir.glob(f"{RECORDED_MODELS[0]}/{GAME}/*/instance_*/instance.json")):
        if path.parents[1].name not in experiments:
            experiments[path.parents[1].name] = json.loads((path.parents[1] / "experiment.json").read_text()) | {
                "game_instances": []}
        if len(experiments[path.parents[1].name]["game_instances"]) < 4:
            experiments[path.parents[1].name]["game_instances"].append(json.loads(path.read_text()))
    (tmp_path / "official.json").write_text(json.dumps({"experiments": list(experiments.values())}))
    results = play_expert(GAME, instances_file=str(tmp_path / "official.json"))
    assert len(results) == 12 and all(r.outcome == "success" for r in results)
