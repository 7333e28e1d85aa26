// A certificate authority of Steward's own and one certificate per service, for mutual TLS between Steward's
// services: `npm start` and the test suites on this machine (a development CA), and the container deployment's
// planes folder (infra/containers/planes.cjs, a CA of that deployment alone, which its operator may replace with
// their own CA's certificates; docs/operations.md). Made with the openssl CLI (node:crypto cannot sign X.509);
// kept under the given folder and reused while valid.
"use strict";
const { spawnSync } = require("node:child_process");
const { X509Certificate } = require("node:crypto");
const { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");

/** The services that get a certificate; the subject CN is the identity the others check. */
const services = ["gateway", "agent-runner", "tool-exec", "policy"];
const CA_DAYS = 3650;
const CERT_DAYS = 365;
/** A certificate closer than this to its end is made again. */
const RENEW_BEFORE_MS = 7 * 86_400_000;

function openssl(args, cwd) {
  const r = spawnSync("openssl", args, { cwd, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  if (r.error) throw new Error(`openssl is needed for the development certificates: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.trim().split("\n").slice(-1)[0]}`);
}

function filesOf(dir, name) {
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/** True when the certificate exists, is issued by `ca`, and stays valid for a while yet. */
function usable(certFile, ca) {
  if (!existsSync(certFile)) return false;
  try {
    const cert = new X509Certificate(readFileSync(certFile));
    const caOk = ca ? cert.checkIssued(ca) && cert.verify(ca.publicKey) : true;
    return caOk && Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

function makeCa(dir, subject) {
  const { cert, key } = filesOf(dir, "ca");
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      String(CA_DAYS),
      "-subj",
      subject,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  chmodSync(key, 0o600);
}

function makeServiceCert(dir, name) {
  const { cert, key } = filesOf(dir, name);
  const ca = filesOf(dir, "ca");
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  // The names it may be reached by (compose/Kubernetes service name, this machine); peers check the CN.
  writeFileSync(
    ext,
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth,clientAuth",
      `subjectAltName=DNS:${name},DNS:localhost,IP:127.0.0.1,IP:::1`,
      "",
    ].join("\n"),
  );
  try {
    openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", csr, "-subj", `/O=Steward/CN=${name}`], dir);
    chmodSync(key, 0o600);
    openssl(
      [
        "x509",
        "-req",
        "-in",
        csr,
        "-CA",
        ca.cert,
        "-CAkey",
        ca.key,
        "-set_serial",
        `0x${require("node:crypto").randomBytes(12).toString("hex")}`,
        "-days",
        String(CERT_DAYS),
        "-sha256",
        "-extfile",
        ext,
        "-out",
        cert,
      ],
      dir,
    );
  } finally {
    rmSync(csr, { force: true });
    rmSync(ext, { force: true });
  }
}

/**
 * Makes sure `dir` holds a CA (subject `caSubject`, default the development CA's) and a certificate for each of
 * `names` (default: the four services), making what is missing, expiring or not signed by the CA. Returns the
 * file paths and, per service, the STEWARD_TLS_* variables that point at them.
 */
function ensureDevPki(dir, names = services, caSubject = "/O=Steward/CN=Steward development CA") {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = filesOf(dir, "ca");
  if (!usable(ca.cert, null) || !existsSync(ca.key)) makeCa(dir, caSubject);
  const caCert = new X509Certificate(readFileSync(ca.cert));
  const env = {};
  for (const name of names) {
    const files = filesOf(dir, name);
    if (!usable(files.cert, caCert) || !existsSync(files.key)) makeServiceCert(dir, name);
    env[name] = { STEWARD_TLS_CA: ca.cert, STEWARD_TLS_CERT: files.cert, STEWARD_TLS_KEY: files.key };
  }
  return { dir, ca, env };
}

module.exports = { ensureDevPki, services };
