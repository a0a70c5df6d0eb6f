// Drives the server's AG-UI route with the AG-UI client from npm (`@ag-ui/client`'s
// `HttpAgent`, pinned in package.json and package-lock.json), which verifies the event
// sequence as it reads it and builds the conversation from it.
//
//     node agui_client.cjs CLIENT_DIR BASE_URL SCENARIO
//
// CLIENT_DIR is where scripts/setup-protocol-clients installed the package. SCENARIO is
// `tools` (agent `weather`: a tool call, then streamed text), `interrupt` (agent
// `bank`: a call that waits for approval; the client resumes it with `resume` entries
// for its pending interrupts; then the same entries again) or `parts` (agent `painter`:
// an image in; reasoning, a tool's image and the model's image out; then a second
// message on the conversation the client built). Prints one JSON document,
// `{"runs": [{runId, events, result, pendingInterrupts, messages}]}`, for the Rust test
// to assert on; exits non-zero if the client rejects a run.

"use strict";

const { createRequire } = require("node:module");
const path = require("node:path");

const [clientDir, baseUrl, scenario] = process.argv.slice(2);
const { HttpAgent } = createRequire(path.join(path.resolve(clientDir), "package.json"))(
  "@ag-ui/client",
);

// A 1x1 PNG.
const DOT =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function agentAt(name, content) {
  return new HttpAgent({
    url: `${baseUrl}/agents/${name}/agui`,
    threadId: "thread-1",
    initialMessages: [{ id: "user-1", role: "user", content }],
  });
}

// Runs the agent once, collecting every event through the subscriber API.
async function run(agent, parameters) {
  const events = [];
  const result = await agent.runAgent(parameters, {
    onEvent({ event }) {
      events.push(event);
    },
  });
  return {
    runId: parameters.runId,
    events,
    result,
    pendingInterrupts: agent.pendingInterrupts,
    // Copied: the agent goes on with the same list.
    messages: structuredClone(agent.messages),
  };
}

async function main() {
  const runs = [];
  if (scenario === "tools") {
    runs.push(await run(agentAt("weather", "Weather in Oslo?"), { runId: "run-1" }));
  } else if (scenario === "interrupt") {
    const agent = agentAt("bank", "pay");
    const stopped = await run(agent, { runId: "run-1" });
    runs.push(stopped);
    const resume = stopped.pendingInterrupts.map((interrupt) => ({
      interruptId: interrupt.id,
      status: "resolved",
      payload: { approved: true },
    }));
    runs.push(await run(agent, { runId: "run-2", resume }));
    // The same entries again, from a client that still thinks them pending.
    const stale = agentAt("bank", "pay");
    stale.pendingInterrupts = stopped.pendingInterrupts;
    runs.push(await run(stale, { runId: "run-3", resume }));
  } else if (scenario === "parts") {
    const agent = agentAt("painter", [
      { type: "text", text: "Draw a dot like this:" },
      { type: "image", source: { type: "data", value: DOT, mimeType: "image/png" } },
    ]);
    runs.push(await run(agent, { runId: "run-1" }));
    // The conversation the client built (reasoning and a tool's image in it) goes back.
    agent.addMessage({ id: "user-2", role: "user", content: "Thanks" });
    runs.push(await run(agent, { runId: "run-2" }));
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  process.stdout.write(JSON.stringify({ runs }) + "\n");
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack}\n`);
  process.exit(1);
});
