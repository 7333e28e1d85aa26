import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { NotFoundError } from "@steward/platform";
import { mintDevelopmentToken } from "../../../dev-token";
import type { GatewayConfig } from "../../../config";
import { NoQuery } from "../schemas";
import { problemResponse, problemResponses } from "../openapi/problems";

/** The demo identity `npm start` seeds and prints a token for (infra/local/seed.mjs). */
export const DEMO_IDENTITY = { tenant: "demo", user: "demo-user", roles: ["member"] } as const;

/** How long a token minted here lives. */
const LIFETIME_SECONDS = 12 * 3600;

/** Set when the gateway may mint the demo user's token: the secret its own tokens are checked with. */
export interface DevSignIn {
  readonly secret: string;
}

/**
 * Whether development sign-in is on, from the gateway's checked configuration: only when STEWARD_ENV=development
 * (or in the suites: STEWARD_ENV=test with the test hooks and STEWARD_TEST_DEV_SIGN_IN=1, which the
 * configuration refuses without the hooks), and only when tokens are checked with a shared secret (a JWKS issuer
 * signs its own). Never in staging or production. `jwtSecret` is the secret the gateway checks tokens with.
 */
export function devSignInFrom(
  config: Pick<GatewayConfig, "STEWARD_ENV" | "STEWARD_TEST_HOOKS" | "STEWARD_TEST_DEV_SIGN_IN" | "STEWARD_JWKS_URL">,
  jwtSecret: string | undefined,
): DevSignIn | null {
  const development = config.STEWARD_ENV === "development";
  const suite = config.STEWARD_ENV === "test" && config.STEWARD_TEST_HOOKS && config.STEWARD_TEST_DEV_SIGN_IN;
  if ((!development && !suite) || config.STEWARD_JWKS_URL || !jwtSecret) return null;
  return { secret: jwtSecret };
}

const DevToken = Type.Object(
  {
    token: Type.String({ description: "A bearer token (JWT) for the demo user; keep it out of URLs and logs" }),
    tenant_id: Type.String(),
    user_id: Type.String(),
    roles: Type.Array(Type.String()),
    expires_at: Type.String({ format: "date-time" }),
  },
  { description: "The demo user's token" },
);

/**
 * POST /v1/dev/sign-in: a token for the demo user, in development only (the web console's one-click sign-in,
 * usable by any client). Public like the probes; everywhere else it answers 404 as a route that does not exist.
 */
export function registerDevSignInRoute(app: FastifyInstance, signIn: DevSignIn | null): void {
  app.post(
    "/v1/dev/sign-in",
    {
      schema: {
        tags: ["operations"],
        summary: "Development sign-in as the demo user",
        description:
          "Mints a 12-hour token for tenant `demo`, user `demo-user` (role member), signed with the development secret. " +
          "Answers only when STEWARD_ENV=development (404 otherwise, and whenever tokens come from a JWKS issuer). Public; takes no body.",
        querystring: NoQuery,
        response: { 200: DevToken, 404: problemResponse(404), ...problemResponses({ public: true }) },
      },
    },
    async (_request, reply) => {
      if (!signIn) throw new NotFoundError("development sign-in is off: it answers only when STEWARD_ENV=development");
      const expiresAt = new Date(Date.now() + LIFETIME_SECONDS * 1000);
      const token = await mintDevelopmentToken(signIn.secret, { ...DEMO_IDENTITY, expiresIn: `${LIFETIME_SECONDS}s` });
      return reply.header("cache-control", "no-store").send({
        token,
        tenant_id: DEMO_IDENTITY.tenant,
        user_id: DEMO_IDENTITY.user,
        roles: [...DEMO_IDENTITY.roles],
        expires_at: expiresAt.toISOString(),
      });
    },
  );
}
