"""`canrun judge`: SmolLM2-135M-Instruct (the real folder tools/fetch_smollm2.sh makes) scores
fluent text above canrun's threshold and garbled text below it; on the committed calibration set
(data/judge_calibration.jsonl, tools/make_judge_calibration.py) the threshold is right at least
90% of the time; bad input is named."""
import re

from conftest import REPO_ROOT

CALIBRATION = REPO_ROOT / "data" / "judge_calibration.jsonl"


def test_the_threshold_separates_the_calibration_set(run_canrun):
    result = run_canrun("judge", "--calibrate", str(CALIBRATION), check=True)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 36 + 2
    accuracy = float(re.search(r"canrun's threshold \S+: ([0-9.]+)% right", lines[-1]).group(1))
    assert accuracy >= 90.0, result.stdout
    best = float(re.search(r"\(([0-9.]+)%\)", lines[-2]).group(1))
    assert accuracy <= best


def test_fluent_passes_and_garbled_fails(run_canrun):
    fluent = run_canrun("judge", "--prompt", "The capital of France is", " Paris, the largest city of France.",
                        check=True)
    assert "PASS_JUDGE" in fluent.stdout and "SmolLM2-135M-Instruct" in fluent.stdout
    garbled = run_canrun("judge", "--prompt", "The capital of France is", " lar cit Fra the Pa ofris gest", check=True)
    assert "FAIL_JUDGE (the mean log-prob is below canrun's threshold" in garbled.stdout, garbled.stdout
    assert "PASS_JUDGE (the mean log-prob is at or above canrun's threshold" in fluent.stdout, fluent.stdout


def test_bad_input_is_named(run_canrun, tmp_path):
    result = run_canrun("judge")
    assert result.returncode != 0 and "TEXT or --calibrate" in result.stderr
    bad = tmp_path / "set.jsonl"
    bad.write_text('{"prompt": "a", "continuation": " b c", "fluent": true}\n{"prompt": "a"}\n')
    result = run_canrun("judge", "--calibrate", str(bad))
    assert result.returncode != 0 and f"{bad}:2" in result.stderr and "fluent" in result.stderr
    result = run_canrun("judge", "x", "--model", str(tmp_path / "nowhere"))
    assert result.returncode != 0 and "nowhere" in result.stderr
