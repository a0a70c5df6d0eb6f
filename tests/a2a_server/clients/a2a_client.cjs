// Drives our A2A face with the official A2A JS SDK's client (@a2a-js/sdk 1.3.0, A2A v1.0).
//
//   node a2a_client.cjs NPM_DIR CARD_URL TOKEN
//
// Resolves the card at CARD_URL (the JS resolver reads a path relative to a base URL
// as URLs resolve, so `/.well-known/...` would replace an agent's path), sends a
// message (blocking) and the same message streamed, and prints what it read as JSON.
const { createRequire } = require("node:module");
const path = require("node:path");
const { randomUUID } = require("node:crypto");

const [npmDir, cardUrl, token] = process.argv.slice(2);
const requireSdk = createRequire(path.join(path.resolve(npmDir), "package.json"));
const { ClientFactory } = requireSdk("@a2a-js/sdk/client");
const { Role } = requireSdk("@a2a-js/sdk");

// Every request of the SDK carries the caller's token.
const fetchWithoutToken = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set("Authorization", `Bearer ${token}`);
  return fetchWithoutToken(input, { ...init, headers });
};

function message(text) {
  return {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function request(text) {
  return { tenant: "", message: message(text), configuration: undefined, metadata: undefined };
}

function plain(value) {
  return JSON.parse(JSON.stringify(value, (_, v) => (typeof v === "bigint" ? Number(v) : v)));
}

(async () => {
  const client = await new ClientFactory().createFromUrl(cardUrl, "");
  const card = await client.getAgentCard();
  const sent = await client.sendMessage(request("What is the weather in Oslo?"));
  const streamed = [];
  for await (const event of client.sendMessageStream(request("What is the weather in Oslo?"))) {
    streamed.push(event.payload);
  }
  console.log(JSON.stringify(plain({ card: { name: card.name }, sent, streamed })));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
