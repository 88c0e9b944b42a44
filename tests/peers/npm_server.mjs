// Tasks peer server on the TypeScript SDK @modelcontextprotocol/sdk@1.32.2 (revision 2025-11-25).
//
// Run:  node tests/peers/npm_server.mjs PORT
// Serves streamable HTTP at http://127.0.0.1:PORT/mcp with one SDK session per client.
// The SDK is loaded from $MCPTASKS_PEERS/npm-sdk (default ~/.cache/mcptasks-gen/peers),
// where .ci/peers.sh installs it, so this file can live outside that folder.
//
// The SDK's Protocol layer answers tasks/get, tasks/result, tasks/list and tasks/cancel
// from the shared in-memory task store; this file only creates tasks for tools/call.
// Tools (all accept task augmentation):
//   slow_compute(seconds, label)  two status messages, then "<label>: done"
//   failing_job()                 ends "failed" with an isError result
//   confirm_delete(filename)      elicits {confirm: boolean} through tasks/result, then
//                                 "deleted <filename>" or "kept <filename>"
//   long_job(seconds)             runs until done or until tasks/cancel arrives
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const peers = process.env.MCPTASKS_PEERS || join(homedir(), '.cache', 'mcptasks-gen', 'peers');
const esm = join(peers, 'npm-sdk', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const load = (rel) => import(pathToFileURL(join(esm, rel)).href);

const { Server } = await load('server/index.js');
const { StreamableHTTPServerTransport } = await load('server/streamableHttp.js');
const { createMcpExpressApp } = await load('server/express.js');
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = await load('experimental/tasks/stores/in-memory.js');
const { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } = await load('types.js');

const POLL_MS = 200;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value, isError = false) => ({ content: [{ type: 'text', text: value }], isError });

const tool = (name, description, properties) => ({
  name,
  description,
  inputSchema: { type: 'object', properties, required: Object.keys(properties) },
  execution: { taskSupport: 'optional' },
});

const TOOLS = [
  tool('slow_compute', "Wait `seconds`, reporting progress, then return '<label>: done'.",
    { seconds: { type: 'number' }, label: { type: 'string' } }),
  tool('failing_job', 'Always fails.', {}),
  tool('confirm_delete', 'Ask the user to confirm deleting `filename`.', { filename: { type: 'string' } }),
  tool('long_job', 'Run for `seconds` unless cancelled first.', { seconds: { type: 'number' } }),
];

const taskStore = new InMemoryTaskStore();
const messageQueue = new InMemoryTaskMessageQueue();

async function isTerminalNow(store, taskId) {
  try {
    const task = await store.getTask(taskId);
    return ['completed', 'failed', 'cancelled'].includes(task.status);
  } catch {
    return true; // gone (expired): nothing left to do
  }
}

// The body of a task; `store` is the request-scoped store (it emits status notifications).
async function work(server, store, taskId, name, args) {
  if (name === 'slow_compute') {
    const seconds = Number(args.seconds ?? 1);
    const label = String(args.label ?? 'job');
    await store.updateTaskStatus(taskId, 'working', `${label}: started`);
    await sleep((seconds * 1000) / 2);
    await store.updateTaskStatus(taskId, 'working', `${label}: halfway`);
    await sleep((seconds * 1000) / 2);
    return { status: 'completed', result: text(`${label}: done`) };
  }
  if (name === 'failing_job') {
    await sleep(200);
    await store.updateTaskStatus(taskId, 'working', 'failing_job failed on purpose');
    return { status: 'failed', result: text('failing_job failed on purpose', true) };
  }
  if (name === 'confirm_delete') {
    const filename = String(args.filename ?? '');
    await store.updateTaskStatus(taskId, 'input_required');
    // With relatedTask the SDK queues the request; tasks/result delivers it.
    const answer = await server.elicitInput(
      {
        message: `Delete ${filename}?`,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', description: 'Delete the file?' } },
          required: ['confirm'],
        },
      },
      { relatedTask: { taskId } },
    );
    if (await isTerminalNow(store, taskId)) return null;
    await store.updateTaskStatus(taskId, 'working');
    const confirmed = answer.action === 'accept' && Boolean(answer.content?.confirm);
    return { status: 'completed', result: text(`${confirmed ? 'deleted' : 'kept'} ${filename}`) };
  }
  if (name === 'long_job') {
    const deadline = Date.now() + Number(args.seconds ?? 30) * 1000;
    await store.updateTaskStatus(taskId, 'working', 'long_job: running');
    while (Date.now() < deadline) {
      if (await isTerminalNow(store, taskId)) return null; // cancelled
      await sleep(50);
    }
    return { status: 'completed', result: text('long_job: done') };
  }
  throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
}

function makeServer() {
  const server = new Server(
    { name: 'mcptasks-peer-ts-sdk', version: '1.32.2' },
    {
      capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: messageQueue,
      defaultTaskPollInterval: POLL_MS,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {}, task: taskParams } = request.params;
    if (!TOOLS.some((t) => t.name === name)) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
    }
    if (!taskParams) {
      throw new McpError(ErrorCode.InvalidParams, `${name} needs task augmentation in this peer`);
    }
    const store = extra.taskStore;
    const task = await store.createTask({ ttl: taskParams.ttl ?? 60000, pollInterval: POLL_MS });
    (async () => {
      try {
        const outcome = await work(server, store, task.taskId, name, args);
        if (outcome && !(await isTerminalNow(store, task.taskId))) {
          await store.storeTaskResult(task.taskId, outcome.status, outcome.result);
        }
      } catch (error) {
        if (!(await isTerminalNow(store, task.taskId))) {
          await store
            .storeTaskResult(task.taskId, 'failed', text(String(error?.message ?? error), true))
            .catch(() => {});
        }
      }
    })();
    return { task };
  });
  return server;
}

const port = parseInt(process.argv[2] ?? '8703', 10);
const app = createMcpExpressApp();
const sessions = new Map();
app.all('/mcp', async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  let transport = sessionId ? sessions.get(sessionId) : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await makeServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});
app.listen(port, '127.0.0.1', () => console.error(`listening on http://127.0.0.1:${port}/mcp`));
