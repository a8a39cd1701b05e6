// Node global fetch (undici, HTTP/1.1 only): `node fetch.mjs URL USER_AGENT` (UA "" = undici default); TLS verification off; prints status.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // accept self-signed certs (must be set before the first request)
process.removeAllListeners('warning'); // silence the "TLS verification disabled" warning
const [url, ua] = process.argv.slice(2);
if (!url || ua === undefined) { console.error('usage: node fetch.mjs URL USER_AGENT'); process.exit(2); }
try {
  const res = await fetch(url, ua ? { headers: { 'User-Agent': ua } } : {});
  await res.arrayBuffer();
  console.log(res.status);
} catch (e) {
  console.error(e.cause ?? e);
  process.exit(1);
}
