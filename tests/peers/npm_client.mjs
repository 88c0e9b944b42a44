// Tasks peer client on the TypeScript SDK @modelcontextprotocol/sdk@1.32.2 (revision 2025-11-25).
//
// Run:  node tests/peers/npm_client.mjs URL TOOL [ARGS_JSON]
//           [--elicit accept|decline|cancel] [--answer JSON] [--cancel-after SECONDS] [--ttl MS]
// The SDK is loaded from $MCPTASKS_PEERS/npm-sdk (default ~/.cache/mcptasks-gen/peers).
//
// Calls TOOL as a task with client.experimental.tasks.callToolStream (tools/call with
// params.task, then tasks/get polling, then tasks/result; on input_required the SDK calls
// tasks/result, which carries the server's elicitation). Elicitations are answered with
// accept + {"confirm": true} unless told otherwise. --cancel-after sends tasks/cancel.
// Prints one JSON line: {task_id, status, result, error, is_error, text, status_messages,
// elicitations, notifications, cancel}.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const peers = process.env.MCPTASKS_PEERS || join(homedir(), '.cache', 'mcptasks-gen', 'peers');
const esm = join(peers, 'npm-sdk', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const load = (rel) => import(pathToFileURL(join(esm, rel)).href);

const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { CallToolResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema, McpError } = await load('types.js');

function parseArgs(argv) {
  const opts = { elicit: 'accept', answer: '{"confirm": true}', cancelAfter: null, ttl: 60000, positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--elicit') opts.elicit = argv[++i];
    else if (arg === '--answer') opts.answer = argv[++i];
    else if (arg === '--cancel-after') opts.cancelAfter = Number(argv[++i]);
    else if (arg === '--ttl') opts.ttl = Number(argv[++i]);
    else opts.positional.push(arg);
  }
  [opts.url, opts.tool, opts.args = '{}'] = opts.positional;
  return opts;
}

const errorOf = (e) => (e instanceof McpError ? { code: e.code, message: e.message } : { code: null, message: String(e?.message ?? e) });
const textOf = (result) => (result?.content ?? []).map((b) => b?.text ?? '').join('');

const opts = parseArgs(process.argv.slice(2));
const report = {
  task_id: null, status: null, result: null, error: null, is_error: false, text: '',
  status_messages: [], elicitations: [], notifications: 0, cancel: null,
};
const noteMessage = (m) => { if (m && !report.status_messages.includes(m)) report.status_messages.push(m); };
const setResult = (result) => {
  report.result = result;
  report.is_error = Boolean(result?.isError);
  report.text = textOf(result);
};

const client = new Client(
  { name: 'mcptasks-peer-ts-client', version: '1.32.2' },
  { capabilities: { elicitation: { form: {} }, tasks: { requests: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  report.elicitations.push(request.params.message);
  return opts.elicit === 'accept' ? { action: 'accept', content: JSON.parse(opts.answer) } : { action: opts.elicit };
});
client.setNotificationHandler(TaskStatusNotificationSchema, async (notification) => {
  report.notifications += 1;
  noteMessage(notification.params.statusMessage);
});

await client.connect(new StreamableHTTPClientTransport(new URL(opts.url)));
let cancelTimer = null;
try {
  const stream = client.experimental.tasks.callToolStream(
    { name: opts.tool, arguments: JSON.parse(opts.args) },
    CallToolResultSchema,
    { task: { ttl: opts.ttl } },
  );
  for await (const message of stream) {
    if (message.type === 'taskCreated') {
      report.task_id = message.task.taskId;
      report.status = message.task.status;
      if (opts.cancelAfter !== null) {
        cancelTimer = setTimeout(async () => {
          try {
            const ack = await client.experimental.tasks.cancelTask(report.task_id);
            report.cancel = { status: ack.status };
          } catch (e) {
            report.cancel = { error: errorOf(e) };
          }
        }, opts.cancelAfter * 1000);
      }
    } else if (message.type === 'taskStatus') {
      report.status = message.task.status;
      noteMessage(message.task.statusMessage);
    } else if (message.type === 'result') {
      setResult(message.result);
    } else if (message.type === 'error') {
      report.error = errorOf(message.error);
    }
  }
  if (report.task_id) {
    const final = await client.experimental.tasks.getTask(report.task_id);
    report.status = final.status;
    noteMessage(final.statusMessage);
    if (final.status === 'failed' && report.result === null) {
      // The stream reports a failed task as an error; tasks/result still has the payload.
      try {
        setResult(await client.experimental.tasks.getTaskResult(report.task_id, CallToolResultSchema));
      } catch (e) {
        report.error = report.error ?? errorOf(e);
      }
    }
  }
} catch (e) {
  report.error = errorOf(e);
} finally {
  if (cancelTimer) clearTimeout(cancelTimer);
}
process.stdout.write(JSON.stringify(report) + '\n');
await client.close().catch(() => {});
process.exit(0);
