// Smoke: the official TypeScript SDK client against a fleet behind nginx.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv[2] || 'http://127.0.0.1:8080/mcp';
const gated = process.argv[3] || "datetime"; // a tool the fleet gates (--require-approval)
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: 'ts-fleet-smoke', version: '1' }, { capabilities: { elicitation: {} } });
let asked = 0;
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked++;
  return { action: 'accept', content: { remember: true } };
});
await client.connect(transport);
console.log('session', transport.sessionId, 'protocol', transport.protocolVersion);
const tools = await client.listTools();
console.log('tools', tools.tools.map(t => t.name).join(','));
let ok = 0;
for (let i = 0; i < 60; i++) {
  const r = await client.callTool({ name: 'calculator', arguments: { input: `${i}*2` } });
  if (!r.isError && r.content[0].text.includes(String(i * 2))) ok++; else console.log('bad', JSON.stringify(r));
}
console.log('calculator ok', ok, 'of 60');
for (let i = 0; i < 4; i++) {
  const r = await client.callTool({ name: gated, arguments: { input: 'now' } });
  console.log('gated', i, r.isError ? 'ERROR ' + r.content[0].text : 'ok', 'asked so far', asked);
}
await transport.terminateSession();
try {
  await client.callTool({ name: 'calculator', arguments: { input: '1+1' } });
  console.log('after DELETE: call succeeded (unexpected)');
} catch (e) { console.log('after DELETE: refused:', String(e.message).slice(0, 120)); }
await client.close();
