"""Writes sdk_samples.json: A2A v1.0 JSON as a2a-sdk writes it, for the wire types' tests.

Run with the venv of scripts/setup-a2a-clients:
    target/test-servers/a2a/venv/bin/python adk/src/a2a/testdata/sdk_samples.py
"""
import json
import pathlib

from google.protobuf import json_format, struct_pb2
from jsonrpc.jsonrpc2 import JSONRPC20Request
from a2a.types import a2a_pb2 as p


def d(m):
    return json_format.MessageToDict(m)


msg = p.Message(
    message_id="m1", context_id="c1", task_id="t1", role=p.ROLE_USER,
    parts=[
        p.Part(text="hello", media_type="text/plain"),
        p.Part(data=struct_pb2.Value(struct_value=struct_pb2.Struct(fields={"decisions": struct_pb2.Value(struct_value=struct_pb2.Struct(fields={"i1": struct_pb2.Value(struct_value=struct_pb2.Struct(fields={"type": struct_pb2.Value(string_value="approve")}))}))}))),
        p.Part(url="https://example.com/y.png", filename="y.png", media_type="image/png"),
        p.Part(raw=b"\x00\x01hi", metadata={"k": "v"}),
    ],
    metadata={"k": "v"}, extensions=["urn:x"], reference_task_ids=["t0"],
)
status = p.TaskStatus(state=p.TASK_STATE_INPUT_REQUIRED, message=p.Message(message_id="m2", role=p.ROLE_AGENT, parts=[p.Part(text="ok")]))
status.timestamp.FromJsonString("2026-11-26T04:20:00.123Z")
task = p.Task(id="t1", context_id="c1", status=status,
              artifacts=[p.Artifact(artifact_id="a1", name="answer", description="the answer", parts=[p.Part(text="hi")], extensions=["urn:y"])],
              history=[msg], metadata={"x": 1})
card = p.AgentCard(
    name="support", description="Answers questions", version="1.0.0",
    supported_interfaces=[p.AgentInterface(url="http://127.0.0.1:1/a2a", protocol_binding="JSONRPC", protocol_version="1.0")],
    capabilities=p.AgentCapabilities(streaming=True, push_notifications=False),
    security_schemes={
        "bearer": p.SecurityScheme(http_auth_security_scheme=p.HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="opaque", description="a token")),
        "key": p.SecurityScheme(api_key_security_scheme=p.APIKeySecurityScheme(location="header", name="X-Key")),
        "oidc": p.SecurityScheme(open_id_connect_security_scheme=p.OpenIdConnectSecurityScheme(open_id_connect_url="https://id/.well-known/openid-configuration")),
        "oauth": p.SecurityScheme(oauth2_security_scheme=p.OAuth2SecurityScheme(flows=p.OAuthFlows(client_credentials=p.ClientCredentialsOAuthFlow(token_url="https://id/token", scopes={"read": "Read"})))),
        "mtls": p.SecurityScheme(mtls_security_scheme=p.MutualTlsSecurityScheme(description="certs")),
    },
    security_requirements=[p.SecurityRequirement(schemes={"bearer": p.StringList(list=[])}), p.SecurityRequirement(schemes={"oauth": p.StringList(list=["read"])})],
    default_input_modes=["text/plain"], default_output_modes=["text/plain", "application/json"],
    skills=[p.AgentSkill(id="lookup", name="lookup", description="Looks up an order", tags=["tool"], examples=["where is order 1?"])],
    provider=p.AgentProvider(organization="Example", url="https://example.com"),
    documentation_url="https://example.com/docs", icon_url="https://example.com/icon.png",
)
samples = {
    "message": d(msg),
    "task": d(task),
    "send_message_response": d(p.SendMessageResponse(task=task)),
    "send_message_response_message": d(p.SendMessageResponse(message=msg)),
    "stream_task": d(p.StreamResponse(task=task)),
    "stream_message": d(p.StreamResponse(message=msg)),
    "stream_status_update": d(p.StreamResponse(status_update=p.TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=p.TaskStatus(state=p.TASK_STATE_WORKING)))),
    "stream_artifact_update": d(p.StreamResponse(artifact_update=p.TaskArtifactUpdateEvent(task_id="t1", context_id="c1", artifact=p.Artifact(artifact_id="a1", parts=[p.Part(text="he")]), append=True, last_chunk=True))),
    "send_message_request": d(p.SendMessageRequest(message=msg, configuration=p.SendMessageConfiguration(accepted_output_modes=["text/plain"], history_length=3, return_immediately=True), metadata={"m": True})),
    "get_task_request": d(p.GetTaskRequest(id="t1", history_length=0)),
    "get_task_request_whole": d(p.GetTaskRequest(id="t1")),
    "cancel_task_request": d(p.CancelTaskRequest(id="t1", metadata={"why": "bored"})),
    "subscribe_to_task_request": d(p.SubscribeToTaskRequest(id="t1")),
    "agent_card": d(card),
    "jsonrpc_request": JSONRPC20Request(method="SendMessage", params=d(p.SendMessageRequest(message=msg)), _id="req-1").data,
}
out = pathlib.Path(__file__).with_name("sdk_samples.json")
out.write_text(json.dumps(samples, indent=2, sort_keys=True) + "\n")
