// The tools of the tests' catalogue server (`_catalog_server.ts`): a strict
// tool whose schema the gateway must enforce, tools that change the listing,
// and any number of generated tools with realistic names, descriptions and
// parameters, the same on every run (the tests and the benchmark ask for
// them by name).

/** A tool as `tools/list` answers it. */
export interface CatalogTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** A tool whose schema refuses a wrong type, a missing field and an extra one. */
export const STRICT_TOOL: CatalogTool = {
  name: "place_order",
  title: "Place an order",
  description:
    "Places an order for a product by its SKU. Answers the order's number.",
  inputSchema: {
    type: "object",
    properties: {
      sku: {
        type: "string",
        pattern: "^[A-Z]{3}-[0-9]{4}$",
        description: "The product's stock-keeping unit, e.g. ABC-1234",
      },
      quantity: { type: "integer", minimum: 1, description: "How many" },
      express: { type: "boolean", description: "Ship by express" },
    },
    required: ["sku", "quantity"],
    additionalProperties: false,
  },
};

const object = (properties: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
});

/** Tools that change the server's own listing, or stop it. */
export const CONTROL_TOOLS: readonly CatalogTool[] = [
  {
    name: "mutate",
    description:
      "Changes this server's tool list (add, remove or rename a tool) and says it changed.",
    inputSchema: object({
      op: { type: "string", enum: ["add", "remove", "rename"] },
      name: { type: "string" },
      to: { type: "string" },
    }),
  },
  {
    name: "crash",
    description: "Exits at once, as a crashing server does.",
    inputSchema: object(),
  },
];

const VERBS = [
  ["create", "Creates"],
  ["get", "Gets"],
  ["list", "Lists"],
  ["update", "Updates"],
  ["delete", "Deletes"],
  ["search", "Searches"],
  ["archive", "Archives"],
  ["export", "Exports"],
  ["import", "Imports"],
  ["approve", "Approves"],
] as const;

const NOUNS = [
  ["invoice", "billing"],
  ["customer", "crm"],
  ["ticket", "support desk"],
  ["repository", "source hosting"],
  ["pull_request", "code review"],
  ["deployment", "release"],
  ["alert", "monitoring"],
  ["dashboard", "analytics"],
  ["calendar_event", "calendar"],
  ["message", "chat"],
  ["channel", "chat"],
  ["document", "wiki"],
  ["spreadsheet", "office"],
  ["contact", "address book"],
  ["payment", "payments"],
  ["subscription", "billing"],
  ["shipment", "logistics"],
  ["warehouse", "inventory"],
  ["product", "catalogue"],
  ["coupon", "marketing"],
  ["campaign", "marketing"],
  ["lead", "sales"],
  ["opportunity", "sales"],
  ["employee", "human resources"],
  ["timesheet", "human resources"],
  ["expense_report", "finance"],
  ["budget", "finance"],
  ["vm_instance", "cloud compute"],
  ["storage_bucket", "cloud storage"],
  ["dns_record", "networking"],
  ["firewall_rule", "networking"],
  ["database_backup", "databases"],
  ["feature_flag", "experimentation"],
  ["experiment", "experimentation"],
  ["log_query", "logging"],
  ["trace", "observability"],
  ["incident", "on-call"],
  ["runbook", "on-call"],
  ["webhook", "integrations"],
  ["api_key", "access management"],
] as const;

const REGIONS = ["", "eu", "us", "apac", "sandbox"] as const;

/**
 * `count` generated tools (at most 2,000): verb × noun × region, e.g.
 * `create_invoice`, `list_dns_record_eu`.
 */
export function generatedTools(count: number): CatalogTool[] {
  const tools: CatalogTool[] = [];
  for (const region of REGIONS) {
    for (const [noun, area] of NOUNS) {
      for (const [verb, verbs] of VERBS) {
        if (tools.length >= count) return tools;
        const thing = noun.replaceAll("_", " ");
        const where = region === ""
          ? ""
          : ` in the ${region.toUpperCase()} region`;
        const name = region === ""
          ? `${verb}_${noun}`
          : `${verb}_${noun}_${region}`;
        const properties: Record<string, unknown> = verb === "list" ||
            verb === "search"
          ? {
            query: {
              type: "string",
              description: `Words to find in the ${thing}'s fields`,
            },
            limit: {
              type: "integer",
              minimum: 1,
              description: `The most ${thing}s to answer`,
            },
          }
          : {
            [`${noun}_id`]: {
              type: "string",
              description: `The ${thing}'s id`,
            },
            ...(verb === "create" || verb === "update"
              ? {
                fields: {
                  type: "object",
                  description: `The ${thing}'s fields to set`,
                },
              }
              : {}),
          };
        tools.push({
          name,
          title: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${thing}${where}`,
          description: `${verbs} ${
            verb === "list" || verb === "search" ? `${thing}s` : `a ${thing}`
          } of the ${area} service${where}. Needs the ${area} scope; answers JSON.`,
          inputSchema: { type: "object", properties },
          annotations: {
            readOnlyHint: ["get", "list", "search", "export"].includes(verb),
          },
        });
      }
    }
  }
  return tools;
}
