"""The unmodified `a2a-sdk` client (A2A 1.0, JSON-RPC binding) against the Fiscus agent gateway.

Usage: a2a_client.py BASE_URL BEARER_KEY CLIENT_ID PRIVATE_KEY_HEX

1. With a bearer key: resolve the agent card at `{gateway}/.well-known/agent-card.json`, send a message that
   names a skill, read the task back (GetTask, ListTasks), and see the protocol's errors for a text-only
   message and for cancelling a finished task.
2. As a signed execution client (every request signed, RFC 9421 Ed25519, by an `httpx` auth hook): the
   extended card lists only the grant's skills, a granted skill completes, a skill outside the grant is
   refused.
Prints one line per step; exits non-zero on the first failure.
"""
import asyncio
import sys

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_message, new_text_part
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    Role,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError, TaskNotCancelableError
from google.protobuf.json_format import MessageToDict
from signing import Keys, sign_every_request


def ask(skill, arguments):
    return SendMessageRequest(
        message=new_message([new_data_part({"skill": skill, "arguments": arguments})], role=Role.ROLE_USER)
    )


async def one_task(client, request):
    tasks = [r.task async for r in client.send_message(request) if r.HasField("task")]
    assert len(tasks) == 1, tasks
    return tasks[0]


async def bearer_steps(gateway, key):
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http:
        client = await create_client(gateway, ClientConfig(httpx_client=http, streaming=False))
        task = await one_task(client, ask("get_actions", {"limit": 5}))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, task
        answer = MessageToDict(task.artifacts[0].parts[0].data)
        assert answer["object"] == "list", answer
        print(f"SendMessage get_actions: task {task.id} completed, {len(answer['data'])} actions")
        read = await client.get_task(GetTaskRequest(id=task.id))
        assert read.id == task.id and read.status.state == TaskState.TASK_STATE_COMPLETED, read
        print(f"GetTask {read.id}: {TaskState.Name(read.status.state)}")
        listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
        assert [t.id for t in listed.tasks] == [task.id], listed
        print(f"ListTasks in context {task.context_id}: {listed.total_size} task")
        failed = await one_task(client, ask("get_actions_uid", {"uid": "act_00000000000000000000000000"}))
        assert failed.status.state == TaskState.TASK_STATE_FAILED, failed
        problem = MessageToDict(failed.status.message.parts[0].data)
        print(f"a missing action: task failed with {problem['status']} {problem['code']}")
        try:
            await client.cancel_task(CancelTaskRequest(id=task.id))
            raise AssertionError("a finished task was cancelled")
        except TaskNotCancelableError as e:
            print(f"CancelTask of a finished task: refused ({e})")
        try:
            await one_task(client, SendMessageRequest(message=new_message([new_text_part("hello")], role=Role.ROLE_USER)))
            raise AssertionError("a text message was accepted")
        except ContentTypeNotSupportedError:
            print("a text-only message: content type not supported")
        await client.close()


async def signed_steps(gateway, keys):
    async with httpx.AsyncClient(auth=sign_every_request(httpx.Auth, keys)) as http:
        client = await create_client(gateway, ClientConfig(httpx_client=http, streaming=False))
        card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        skills = sorted(s.id for s in card.skills)
        assert "get_agent_execution_capabilities" in skills and "get_actions" not in skills, skills
        print(f"extended card: {len(skills)} granted skills")
        task = await one_task(client, ask("get_agent_execution_capabilities", {}))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, task
        print(f"signed SendMessage get_agent_execution_capabilities: task {task.id} completed")
        try:
            await one_task(client, ask("get_actions", {}))
            raise AssertionError("a skill outside the grant was called")
        except InvalidParamsError as e:
            assert "not offered" in str(e), e
            print(f"get_actions outside the grant: refused ({e})")
        await client.close()


async def main() -> int:
    base, key, client_id, key_hex = sys.argv[1:5]
    gateway = f"{base}/api/v2/agent-execution"
    await bearer_steps(gateway, key)
    keys = Keys.from_hex(client_id, key_hex)
    await signed_steps(gateway, keys)
    print("a2a sdk: ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
