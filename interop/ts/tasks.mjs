// Smoke: the official TypeScript SDK's experimental 2025-11-25 tasks client
// against mcp-tools, over streamable HTTP (argv[2] = URL) or stdio (argv[2] = "stdio", argv[3..] = command).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [mode, ...rest] = process.argv.slice(2);
const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(mode));
const client = new Client({ name: 'ts-tasks-smoke', version: '1' }, { capabilities: {} });
await client.connect(transport);
console.log('server capabilities.tasks', JSON.stringify(client.getServerCapabilities().tasks));
const tools = await client.listTools();
console.log('train execution', JSON.stringify(tools.tools.find(t => t.name === 'train')?.execution));
const stream = client.experimental.tasks.callToolStream({ name: 'train', arguments: { input: '8' } }, undefined, { task: { ttl: 60000 } });
let id;
for await (const msg of stream) {
  if (msg.type === 'taskCreated') { id = msg.task.taskId; console.log('taskCreated', id, msg.task.status); }
  else if (msg.type === 'taskStatus') console.log('taskStatus', msg.task.status, msg.task.statusMessage);
  else if (msg.type === 'result') console.log('result', JSON.stringify(msg.result.content));
  else if (msg.type === 'error') console.log('error', msg.error);
}
console.log('getTask', JSON.stringify(await client.experimental.tasks.getTask(id)).slice(0, 200));
// Cancel mid-run.
const s2 = client.experimental.tasks.callToolStream({ name: 'train', arguments: { input: '1000' } }, undefined, { task: {} });
const first = await s2.next();
const id2 = first.value.task.taskId;
await new Promise(r => setTimeout(r, 500));
const c = await client.experimental.tasks.cancelTask(id2);
console.log('cancelTask', c.status);
console.log('after cancel', (await client.experimental.tasks.getTask(id2)).status);
await client.close();
