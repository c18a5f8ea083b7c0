// latency-origin.mjs - a crawled origin that answers after a fixed delay,
// as a real site on the other side of the internet does.
//
//     node tests/lib/latency-origin.mjs HTDOCS WORK DELAY_MS
//
// Serves HTDOCS/<host>/<path> (a directory: its index.html) by the Host
// header, like tests/lib/origin.sh's many-hosts include (and, like it, with
// the token __PORT__ in a file replaced by the port), on a free port of
// 127.0.0.1, each answer sent DELAY_MS after its request arrived (keep-alive
// connections, as nginx keeps them). Prints the port on stdout once it
// listens; writes its pid to WORK/master.pid (origin.sh's origin__kill
// stops it) and one line a request to WORK/logs/hosts.log in the format of
// origin.sh's origin_host log: HOST MSEC "REQUEST" STATUS BYTES
// REQUEST_TIME, MSEC the time the answer left (nginx's $msec), so that
// MSEC - REQUEST_TIME is when the request arrived.
//
// Used by bench/night.sh (NIGHT_LATENCY_MS): loopback has no latency, and
// this kernel has no netem to add some, so a night's transfers in flight
// (latency x requests a second) are never measured without it.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const [htdocs, work, delayArg] = process.argv.slice(2);
if (!htdocs || !work || delayArg === undefined) {
	console.error("usage: latency-origin.mjs HTDOCS WORK DELAY_MS");
	process.exit(2);
}
const delay = Number(delayArg);
const types = { html: "text/html", xml: "application/xml", txt: "text/plain" };
let port = 0;
const cache = new Map();	// file path -> Buffer, or null when absent
const log = fs.createWriteStream(path.join(work, "logs", "hosts.log"), { flags: "a" });

// a file as served: origin.sh's token __PORT__ replaced by our port
function read(file) {
	try {
		const text = fs.readFileSync(file, "latin1");
		return Buffer.from(text.replaceAll("__PORT__", String(port)), "latin1");
	} catch {
		return null;
	}
}

function body(file) {
	if (!cache.has(file))
		cache.set(file, file.endsWith("/") ? read(path.join(file, "index.html")) :
						     read(file));
	return cache.get(file);
}

const server = http.createServer((req, res) => {
	const arrived = Date.now();
	const host = (req.headers.host || "").replace(/:\d+$/, "").toLowerCase();
	const url = new URL(req.url, "http://x");
	const rel = path.normalize(decodeURIComponent(url.pathname));
	const data = /^[a-z0-9.-]+$/.test(host) && !rel.includes("..") ?
		body(path.join(htdocs, host, rel)) : null;
	const type = types[path.extname(rel).slice(1)] || "text/html";
	setTimeout(() => {
		const status = data ? 200 : 404;
		const out = data || Buffer.from("not found\n");
		res.writeHead(status, { "Content-Type": type, "Content-Length": out.length });
		res.end(req.method === "HEAD" ? undefined : out);
		const now = Date.now();
		log.write(`${host} ${(now / 1000).toFixed(3)} "${req.method} ${req.url} ` +
			  `HTTP/${req.httpVersion}" ${status} ${out.length} ` +
			  `${((now - arrived) / 1000).toFixed(3)}\n`);
	}, delay);
});
server.keepAliveTimeout = 75000;
server.headersTimeout = 80000;
server.maxRequestsPerSocket = 0;
server.listen(0, "127.0.0.1", () => {
	port = server.address().port;
	fs.writeFileSync(path.join(work, "master.pid"), `${process.pid}\n`);
	console.log(server.address().port);
});
for (const sig of ["SIGQUIT", "SIGTERM", "SIGINT"])
	process.on(sig, () => { log.end(); process.exit(0); });
