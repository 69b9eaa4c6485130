"""arag-eval and arag-agent end to end: a real arag-mcp over streamable HTTP and a scripted model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest
from arag_mcp.agent.cli import agent_main, eval_main
from arag_mcp.agent.mcp_tools import ServerTarget, connect
from arag_mcp.agent.metrics import normalize_answer, parse_verdict

from ..conftest import FIXTURES
from ..mcp_helpers import http_server
from ..scripted_llm import call, say, scripted_llm, tool_messages

pytestmark = pytest.mark.slow
TOKEN = "sesame"

SAMPLE_QUESTIONS = [
    {"id": "q1", "question": "Which country is polonium named after?", "answers": ["Poland"]},
    {"id": "q2", "question": "Where was Marie Curie born?", "answers": ["Warsaw"]},
    {"id": "q3", "question": "When did Pierre Curie die?", "answers": ["1906", "19 April 1906"]},
]


@pytest.fixture(scope="module")
def server_url(sample_index):
    with http_server(sample_index, "streamable-http", "--auth-token", TOKEN) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def polonium(server_url) -> str:
    """The id of the chunk that says polonium was named after Poland."""

    async def find() -> str:
        async with connect(ServerTarget(url=server_url, token=TOKEN)) as tools:
            found = await tools.conversation().call(
                "keyword_search", {"keywords": ["named it after Poland"], "top_k": 1}
            )
        return found.chunk_ids[0]

    return anyio.run(find)


@pytest.fixture(scope="module")
def llm():
    with scripted_llm() as server:
        yield server


@pytest.fixture
def client_args(llm):
    """The scripted model (reset) and the server's bearer token."""
    llm.reset()
    return ["--base-url", llm.base_url, "--api-key", "test", "--model", "scripted", "--server-token", TOKEN]


def dataset(folder: Path, questions: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return folder


def traces(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "traces.jsonl").read_text(encoding="utf-8").splitlines()]


def test_normalisation_and_verdicts():
    assert normalize_answer("The  U.S.A.!") == "usa"
    assert normalize_answer("An apple, a pear") == "apple pear"
    assert [parse_verdict(r) for r in ("correct", "Correct.", "incorrect", "INCORRECT", "not sure", "")] == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]


def test_metrics_match_hand_computed_values(tmp_path, server_url, llm, client_args, capsys):
    fixture = [json.loads(line) for line in (FIXTURES / "agent_metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    for item in fixture:
        llm.add(say(item["prediction"]))
        if item["prediction"].strip():
            llm.add(say(item["judge"]))
    data, out = dataset(tmp_path / "metrics", fixture), tmp_path / "run"
    argv = ["run", "--dataset", str(data), "--server", server_url, "--workflow", "direct", "--out", str(out)]

    assert eval_main([*argv, *client_args]) == 0

    summary = json.loads((out / "summary.json").read_text())
    # answered: all but m6 (empty) and m10 (blank) -> 8
    # contain (gold only): m1 m2 m3 m7 ("no" inside "not") m8 -> 5; m4 m5 m9 miss
    # contain with aliases: adds m4 ("Curie") and m9 ("Marie Curie") -> 7
    # judge: m1 m2 m3 m4 m8 m9 correct -> 6; m5 m7 incorrect; m6 m10 not judged
    assert (summary["questions"], summary["answered"], summary["judge_calls"]) == (10, 8, 8)
    assert (summary["contain_acc"], summary["contain_acc_all"]) == (62.5, 50.0)
    assert (summary["contain_acc_alias"], summary["contain_acc_alias_all"]) == (87.5, 70.0)
    assert (summary["llm_acc"], summary["llm_acc_all"]) == (75.0, 60.0)
    assert (summary["tool_calls"], summary["retrieved_tokens"], summary["llm_calls"]) == (0, 0, 1)
    judge_prompt = llm.requests[1]["messages"][0]["content"]
    assert "Gold answer: Warsaw" in judge_prompt and "Answer: She was born in Warsaw." in judge_prompt
    printed = capsys.readouterr().out
    assert "LLM-Acc % (answered)" in printed and "75.0" in printed


def test_run_resumes_after_an_interruption(tmp_path, server_url, llm, client_args):
    data, out = dataset(tmp_path / "sample", SAMPLE_QUESTIONS), tmp_path / "run"
    argv = ["run", "--dataset", str(data), "--server", server_url, "--out", str(out), *client_args]
    llm.add(call(("keyword_search", {"keywords": ["Polonium"]})), say("Poland"), say("correct"))
    assert eval_main([*argv, "--limit", "1"]) == 0
    with (out / "traces.jsonl").open("a") as partial:
        partial.write('{"id": "q2", "answer": "War')  # a line cut short by the interruption

    llm.reset()
    llm.add(say("Warsaw"), say("correct"))
    assert eval_main([*argv, "--limit", "2"]) == 0

    assert [request["messages"][1]["content"] for request in llm.requests[:1]] == [SAMPLE_QUESTIONS[1]["question"]]
    assert len(llm.requests) == 2
    records = {record["id"]: record for record in traces(out)}
    assert list(records) == ["q1", "q2"]
    assert records["q1"]["answer"] == "Poland" and records["q1"]["tool_calls"][0]["name"] == "keyword_search"
    assert records["q1"]["retrieved_tokens"] > 0 and records["q2"]["answer"] == "Warsaw"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["questions"], summary["contain_acc"], summary["tool_calls"]) == (2, 100.0, 0.5)


def test_a_line_torn_inside_a_character_is_dropped_and_redone(tmp_path, server_url, llm, client_args):
    data, out = dataset(tmp_path / "sample", SAMPLE_QUESTIONS), tmp_path / "run"
    argv = ["run", "--dataset", str(data), "--server", server_url, "--out", str(out), "--workflow", "direct"]
    llm.add(say("Poland"), say("correct"))
    assert eval_main([*argv, "--limit", "1", *client_args]) == 0
    torn = json.dumps({"id": "q2", "answer": "Kraków"}, ensure_ascii=False).encode()
    with (out / "traces.jsonl").open("ab") as partial:
        partial.write(torn[: torn.index("ó".encode()) + 1])  # cut between the two bytes of "ó"

    llm.add(say("Warsaw"), say("correct"))
    assert eval_main([*argv, "--limit", "2", *client_args]) == 0
    assert eval_main([*argv, "--limit", "2", *client_args]) == 0  # nothing left to answer

    asked = [request["messages"][1]["content"] for request in llm.requests if len(request["messages"]) == 2]
    assert asked == [SAMPLE_QUESTIONS[0]["question"], SAMPLE_QUESTIONS[1]["question"]] and len(llm.requests) == 4
    assert [(record["id"], record["answer"]) for record in traces(out)] == [("q1", "Poland"), ("q2", "Warsaw")]


def test_an_unreadable_line_before_the_last_is_a_one_line_error(tmp_path, capsys):
    data, out = dataset(tmp_path / "sample", SAMPLE_QUESTIONS), tmp_path / "run"
    out.mkdir()
    good = json.dumps({"id": "q1", "answer": "Poland"})
    (out / "traces.jsonl").write_bytes(
        f"{good}\n".encode() + b'{"id": "q2", "answer": "Krak\xc3\n' + f"{good}\n".encode()
    )
    argv = ["run", "--dataset", str(data), "--server", "http://127.0.0.1:9/mcp", "--out", str(out)]
    assert eval_main([*argv, "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]) == 1
    assert capsys.readouterr().err == (
        f"arag-eval: error: {out}/traces.jsonl line 2 is not a trace record; delete that line (its question is "
        "then answered again) or pass a new --out\n"
    )


def test_a_run_folder_keeps_its_configuration(tmp_path, server_url, client_args, capsys):
    data, out = dataset(tmp_path / "sample", SAMPLE_QUESTIONS), tmp_path / "run"
    (out).mkdir()
    (out / "run.json").write_text(json.dumps({"workflow": "direct"}))
    argv = ["run", "--dataset", str(data), "--server", server_url, "--out", str(out), *client_args]
    assert eval_main(argv) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("arag-eval: error:") and "pass a new --out" in error and "\n" not in error


def test_each_question_is_one_server_conversation(tmp_path, server_url, llm, client_args, polonium):
    """The handle of a question's first result goes with its later calls; the next question starts afresh."""
    data = dataset(tmp_path / "sample", SAMPLE_QUESTIONS[:2])
    search = call(("keyword_search", {"keywords": ["named it after Poland"], "top_k": 1}))
    read = call(("chunk_read", {"chunk_ids": [polonium]}))
    llm.add(search, read, read, say("Poland"), say("correct"))
    llm.add(search, read, say("Warsaw"), say("correct"))
    out = tmp_path / "run"
    assert eval_main(["run", "--dataset", str(data), "--server", server_url, "--out", str(out), *client_args]) == 0

    first_question = tool_messages(llm.requests[3])
    assert "named it after Poland" in first_question[0] and "(whole chunk)" in first_question[0]
    assert "read before" in first_question[1] and "read before" in first_question[2]
    second_question = tool_messages(llm.requests[7])
    assert "named it after Poland" in second_question[0] and "(whole chunk)" in second_question[0]
    assert all("conversation" not in tool["function"]["parameters"]["properties"] for tool in llm.requests[0]["tools"])


def test_concurrent_questions(tmp_path, server_url, llm, client_args):
    answers = {q["question"]: q["answers"][0] for q in SAMPLE_QUESTIONS}

    def reply(request: dict) -> dict:
        last = request["messages"][-1]
        if last["content"].startswith("You grade"):
            return say("correct")
        question = request["messages"][1]["content"]
        if last["role"] == "user":
            return call(("keyword_search", {"keywords": [answers[question]]}))
        return say(answers[question])

    llm.add(*[reply] * 9)
    data, out = dataset(tmp_path / "sample", SAMPLE_QUESTIONS), tmp_path / "run"
    argv = ["run", "--dataset", str(data), "--server", server_url, "--out", str(out)]
    assert eval_main([*argv, "--concurrency", "3", *client_args]) == 0
    records = sorted(traces(out), key=lambda record: record["id"])
    assert [record["id"] for record in records] == ["q1", "q2", "q3"]
    assert all(
        answer in record["messages"][3]["content"] for answer, record in zip(("Poland", "Warsaw", "1906"), records)
    )
    assert json.loads((out / "summary.json").read_text())["llm_acc"] == 100.0


def test_bad_datasets_are_one_line_errors(tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "questions.jsonl").write_text('{"id": "x", "question": "Who?", "answers": []}\n')
    argv = ["--server", "http://127.0.0.1:9/mcp", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    assert eval_main(["run", "--dataset", str(bad), *argv]) == 1
    error = capsys.readouterr().err
    assert (
        error
        == f'arag-eval: error: {bad}/questions.jsonl line 1 is not a question record; each line needs "question" and a non-empty "answers" list\n'
    )
    assert eval_main(["run", "--dataset", str(tmp_path / "none"), *argv]) == 1
    assert "no questions.jsonl in" in capsys.readouterr().err


def test_compare_puts_runs_side_by_side(tmp_path, capsys):
    for name, accuracy in (("react", 70.0), ("naive", 50.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps({"questions": 10, "llm_acc": accuracy}))
    assert eval_main(["compare", str(tmp_path / "react"), str(tmp_path / "naive")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("LLM-Acc % (answered)"))
    assert row.split()[-2:] == ["70.0", "50.0"]


def test_agent_ask_prints_answer_citations_and_trace(server_url, llm, client_args, capsys, polonium):
    llm.add(call(("keyword_search", {"keywords": ["named it after Poland"], "top_k": 1})), say(f"Poland, {polonium}"))
    assert agent_main(["ask", "Which country is polonium named after?", "--server", server_url, *client_args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Poland, {polonium}" and lines[2] == f"cited: {polonium}"
    assert lines[4].startswith('  1. keyword_search {"keywords": ["named it after Poland"], "top_k": 1}')
    assert lines[5].startswith("1 tool calls, ") and "2 model calls" in lines[5]


def test_agent_ask_reports_configuration_errors_on_one_line(tmp_path, server_url, llm, capsys, monkeypatch):
    monkeypatch.delenv("ARAG_AGENT_MODEL", raising=False)
    monkeypatch.delenv("ARAG_MCP_AUTH_TOKEN", raising=False)
    model = ["--base-url", llm.base_url, "--model", "scripted"]
    assert agent_main(["ask", "Who?", "--server", server_url, *model]) == 1
    error = capsys.readouterr().err
    assert error.startswith("arag-agent: error: ") and "--server-token" in error and error.count("\n") == 1
    assert agent_main(["ask", "Who?", "--server", server_url, "--base-url", "http://127.0.0.1:9/v1"]) == 1
    assert (
        capsys.readouterr().err
        == "arag-agent: error: no model named; pass --model or set ARAG_AGENT_MODEL (e.g. gpt-5-mini, Qwen/Qwen3-8B)\n"
    )
    args = [
        "ask",
        "Who?",
        "--server",
        server_url,
        "--server-token",
        TOKEN,
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ]
    assert agent_main(args) == 1
    error = capsys.readouterr().err
    assert error.startswith("arag-agent: error: cannot reach the model endpoint at http://127.0.0.1:9/v1")
    assert error.count("\n") == 1
    with pytest.raises(SystemExit) as exited:
        agent_main(["ask", "Who?", "--index", str(tmp_path / "missing"), "--model", "m"])
    assert exited.value.code == 2 and "no index at" in capsys.readouterr().err
    shutil.rmtree(tmp_path, ignore_errors=True)
