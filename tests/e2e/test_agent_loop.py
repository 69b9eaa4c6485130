"""The agent's workflows against the real arag-mcp server (stdio, sample index) and a scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from arag_mcp.agent import prompts
from arag_mcp.agent.context import ContextBudget
from arag_mcp.agent.llm import ChatModel, ModelConfig
from arag_mcp.agent.loop import LoopLimits
from arag_mcp.agent.mcp_tools import ServerTarget, connect
from arag_mcp.agent.tokens import count_tokens
from arag_mcp.agent.workflows import answer

from ..mcp_helpers import SERVER
from ..scripted_llm import call, say, scripted_llm, tool_messages

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm():
    with scripted_llm() as server:
        yield server


@pytest.fixture(scope="module")
def served(sample_index):
    """(portal, tools): one stdio server for the module, driven from a background event loop."""
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(connect(ServerTarget(index=str(sample_index)))) as tools:
            yield portal, tools


@pytest.fixture
def ask(served, llm):
    """Answer a question with a workflow; the scripted model is reset per test."""
    portal, tools = served
    llm.reset()

    def run(question: str, workflow: str = "react", **limits: int):
        async def go():
            model = ChatModel(ModelConfig("scripted", llm.base_url, "unused"))
            try:
                return await answer(workflow, tools, model, question, LoopLimits(**limits))
            finally:
                await model.close()

        return portal.call(go)

    return run


def chunk_of(served, keyword: str) -> str:
    portal, tools = served

    async def find() -> str:
        outcome = await tools.conversation().call("keyword_search", {"keywords": [keyword], "top_k": 1})
        return outcome.chunk_ids[0]

    return portal.call(find)


def schema_tokens(served) -> int:
    return count_tokens([json.dumps(served[1].conversation().schemas())])


def test_tools_run_through_mcp_and_their_text_reaches_the_model(ask, llm, served):
    polonium = chunk_of(served, "named it after Poland")
    llm.add(
        call(("keyword_search", {"keywords": ["named it after Poland"], "top_k": 1})),
        call(("chunk_read", {"chunk_ids": [polonium]})),
        say(f"Poland [{polonium}]"),
    )
    result = ask("Which country is polonium named after?")

    assert result.answer == f"Poland [{polonium}]"
    assert result.cited == [polonium] and result.read == [polonium]
    assert [c.name for c in result.tool_calls] == ["keyword_search", "chunk_read"]
    first, second, third = llm.requests
    shown = {tool["function"]["name"]: tool["function"]["parameters"] for tool in first["tools"]}
    assert set(shown) == {"keyword_search", "semantic_search", "chunk_read"}
    assert all("conversation" not in schema["properties"] for schema in shown.values())
    assert polonium in tool_messages(second)[0]
    assert "named it after Poland" in tool_messages(third)[0]  # a short chunk comes whole in the search
    assert "read before" in tool_messages(third)[1]
    assert result.retrieved_tokens == sum(c.retrieved_tokens for c in result.tool_calls) > 50
    assert (result.llm_calls, result.prompt_tokens, result.completion_tokens) == (3, 300, 30)


def test_iteration_limit_forces_a_final_answer_without_tools(ask, llm):
    llm.add(
        call(("keyword_search", {"keywords": ["radium"]})),
        call(("keyword_search", {"keywords": ["Sorbonne"]})),
        say("Pierre Curie"),
    )
    result = ask("Who shared the discovery of radium?", max_iterations=2)

    assert result.answer == "Pierre Curie"
    assert len(result.tool_calls) == 2
    final = llm.requests[-1]
    assert "tools" not in final
    assert final["messages"][-1] == {"role": "user", "content": prompts.FINAL_ANSWER}


def test_malformed_arguments_come_back_as_tool_errors(ask, llm):
    llm.add(
        call(("keyword_search", '{"keywords": ["radium"'), ("chunk_read", {"chunk_ids": 7}), ("no_such_tool", {})),
        say("I could not find it."),
    )
    result = ask("What is radium?")

    assert result.answer == "I could not find it."
    errors = tool_messages(llm.requests[1])
    assert errors[0].startswith("Error: the arguments are not valid JSON")
    assert "chunk_ids must be a list of chunk ids" in errors[1]
    assert "no tool named 'no_such_tool'" in errors[2]
    assert [c.is_error for c in result.tool_calls] == [True, True, True]


def test_arguments_nested_thousands_deep_come_back_as_a_tool_error(ask, llm):
    deep = '{"keywords": ' + "[" * 3000 + '"radium"' + "]" * 3000 + "}"
    llm.add(call(("keyword_search", deep), ("keyword_search", {"keywords": ["radium"], "top_k": 1})), say("Radium"))
    result = ask("What is radium?")

    assert result.answer == "Radium"
    deep_error, found = tool_messages(llm.requests[1])
    assert deep_error == (
        "Error: the arguments are nested 3001 levels deep (at most 32); "
        "call keyword_search again with a JSON object of its parameters"
    )
    assert "Radium" in found
    assert [c.is_error for c in result.tool_calls] == [True, False]


def test_summarize_arguments_of_the_wrong_type_come_back_as_a_tool_error(ask, llm):
    llm.add(call(("summarize", {"findings": "Nothing yet.", "keep_chunk_ids": 5})), say("Curium"))
    result = ask("Which element is synthetic?", token_budget=1)

    assert result.answer == "Curium"
    summarize_call, answer_call = llm.requests
    assert [tool["function"]["name"] for tool in summarize_call["tools"]] == ["summarize"]
    assert tool_messages(answer_call) == [
        prompts.SUMMARIZE_REFUSED.format(
            problem="the arguments are not usable: keep_chunk_ids is a number, not a list of strings", pruned=0
        )
    ]


def test_summarize_at_the_budget_prunes_results_not_kept(ask, llm, served):
    curium = chunk_of(served, "synthetic chemical element")
    searches = [
        call(("keyword_search", {"keywords": ["synthetic chemical element"], "top_k": 1})),
        call(("keyword_search", {"keywords": ["piezoelectricity"], "top_k": 1})),
    ]
    llm.add(*searches, say("Curium"))
    ask("Which element is synthetic?")
    budget = ContextBudget(1, schema_tokens(served))
    after_first, after_second = (budget.used(request["messages"]) for request in llm.requests[1:3])

    llm.reset()
    summary = call(("summarize", {"findings": "Curium is synthetic.", "keep_chunk_ids": [curium]}))
    llm.add(*searches, summary, say("Curium"))
    # The second result passes it; 25 tokens of slack, as a run's random conversation handles tokenize
    # to a few tokens more or less.
    result = ask("Which element is synthetic?", token_budget=after_second - 25)

    assert after_second - after_first > 60 and result.answer == "Curium"
    summarize_request, after = llm.requests[2], llm.requests[3]
    assert "summarize" not in json.dumps(llm.requests[1]["messages"])
    assert summarize_request["tool_choice"] == {"type": "function", "function": {"name": "summarize"}}
    assert [tool["function"]["name"] for tool in summarize_request["tools"]] == ["summarize"]
    kept, pruned, recorded = tool_messages(after)
    assert "synthetic chemical element" in kept and curium in kept
    assert pruned == prompts.PRUNED
    assert recorded == prompts.SUMMARIZED.format(pruned=1)
    assert "Curium is synthetic." in json.dumps(after["messages"])


def test_context_warning_once_past_ninety_percent(ask, llm, served):
    script = [call(("keyword_search", {"keywords": ["Curie"], "top_k": 3})), say("Marie Curie")]
    llm.add(*script)
    ask("Who discovered polonium?")
    assert not any(m["content"].startswith("Note: this conversation") for m in llm.requests[1]["messages"])
    used = ContextBudget(1, schema_tokens(served)).used(llm.requests[1]["messages"])

    llm.reset()
    llm.add(*script)
    budget = int(used / 0.95)
    result = ask("Who discovered polonium?", token_budget=budget)
    notes = [m for m in llm.requests[1]["messages"] if m["role"] == "user" and m["content"].startswith("Note:")]
    assert len(notes) == 1 and f"of its {budget} token budget" in notes[0]["content"]
    assert result.answer == "Marie Curie" and len(llm.requests) == 2


def test_ma_rag_runs_planner_steps_and_final_answer(ask, llm):
    llm.add(
        say('["Find the element named after Poland", "Find who discovered that element"]'),
        say("element named after Poland"),
        say("It was discovered in July 1898 by Marie and Pierre Curie, who named it after Poland."),
        say("Polonium"),
        say("who discovered polonium"),
        say("Marie and Pierre Curie discovered it."),
        say("Marie and Pierre Curie"),
        say("Marie and Pierre Curie"),
    )
    result = ask("Who discovered the element named after Poland?", workflow="ma-rag")

    assert result.answer == "Marie and Pierre Curie"
    roles = [request["messages"][0]["content"] for request in llm.requests]
    step = [prompts.STEP_DEFINER, prompts.EXTRACTOR, prompts.STEP_QA]
    assert roles == [prompts.PLANNER, *step, *step, prompts.FINAL_QA]
    names = [c.name for c in result.tool_calls]
    assert names.count("semantic_search") == 2 and set(names) == {"semantic_search", "chunk_read"}
    assert names[0] == "semantic_search"  # each step searches, then reads what did not come whole
    assert result.tool_calls[0].arguments == {"query": "element named after Poland", "top_k": 5}
    assert result.tool_calls[2].arguments["query"] == "who discovered polonium"
    assert "Current step: Find who discovered that element" in llm.requests[4]["messages"][1]["content"]
    assert "- element named after Poland: Polonium" in llm.requests[4]["messages"][1]["content"]
    assert "Polonium" in llm.requests[-1]["messages"][1]["content"]
    assert [entry["agent"] for entry in result.messages][:4] == ["planner", "step_definer", "extractor", "step_qa"]


def test_ma_rag_with_a_plan_nested_thousands_deep_records_it_and_plans_the_question(ask, llm):
    question = "Who discovered polonium?"
    llm.add(
        say("[" * 3000 + "]" * 3000),
        say("who discovered polonium"),
        say("It was discovered in July 1898 by Marie and Pierre Curie."),
        say("Marie and Pierre Curie"),
        say("Marie and Pierre Curie"),
    )
    result = ask(question, workflow="ma-rag")

    assert result.answer == "Marie and Pierre Curie"
    planner = result.messages[0]
    assert planner["error"] == "the plan is nested 3000 levels deep (at most 32); the question is the plan's one step"
    assert f"Plan:\n1. {question}\n" in llm.requests[1]["messages"][1]["content"]
    assert [c.name for c in result.tool_calls] == ["semantic_search", "chunk_read"]


def test_direct_answers_without_tools(ask, llm):
    llm.add(say("Warsaw"))
    result = ask("Where was Marie Curie born?", workflow="direct")
    assert result.answer == "Warsaw" and result.tool_calls == [] and "tools" not in llm.requests[0]


def test_naive_rag_needs_the_naive_profile(ask):
    from arag_mcp.agent.workflows.errors import WorkflowError

    with pytest.raises(WorkflowError, match="--profile naive"):
        ask("Where was Marie Curie born?", workflow="naive-rag")


def test_naive_rag_answers_from_the_top_five_chunks(sample_index, llm):
    usage = subprocess.run([*SERVER, "--help"], capture_output=True, text=True, timeout=60).stdout
    if "--profile" not in usage:
        pytest.skip("arag-mcp has no --profile option")
    llm.reset()
    llm.add(say("Warsaw"))

    async def go():
        model = ChatModel(ModelConfig("scripted", llm.base_url, "unused"))
        try:
            async with connect(ServerTarget(index=str(sample_index), profile="naive")) as tools:
                return await answer("naive-rag", tools, model, "Where was Marie Curie born?", LoopLimits())
        finally:
            await model.close()

    result = anyio.run(go)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("naive_embedding_search", {"query": "Where was Marie Curie born?", "top_k": 5})
    ]
    passages = llm.requests[0]["messages"][1]["content"]
    assert "Kingdom of Poland" in passages and "Question: Where was Marie Curie born?" in passages
    assert result.answer == "Warsaw" and result.llm_calls == 1


def test_started_server_inherits_the_environment_but_not_endpoint_keys(monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    parameters = ServerTarget(index="/data/idx", profile="naive").stdio_parameters()
    assert parameters.args[-4:] == ["--log-level", "WARNING", "--profile", "naive"]
    assert (
        parameters.env["AWS_REGION"] == "eu-west-1" and parameters.env["ARAG_MCP_CACHE"] == os.environ["ARAG_MCP_CACHE"]
    )
    assert "OPENAI_API_KEY" not in parameters.env


def test_agent_ask_over_stdio_from_the_command_line(sample_index, llm):
    llm.reset()
    llm.add(call(("semantic_search", {"query": "Where was Marie Curie born?", "top_k": 2})), say("Warsaw"))
    environment = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test", "ARAG_AGENT_MODEL": "scripted"}
    done = subprocess.run(
        [sys.executable, "-m", "arag_mcp.agent", "ask", "Where was Marie Curie born?", "--index", str(sample_index)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **environment},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Warsaw" and lines[2] == "cited: none"
    assert lines[4].startswith('  1. semantic_search {"query": "Where was Marie Curie born?", "top_k": 2}')
    assert "Kingdom of Poland" in tool_messages(llm.requests[1])[0]
