// What a model asks search_tools for, in its own words, and the tool of
// the real servers (server-filesystem as "fs", server-everything as
// "everything") it needs. Written from what each tool is for, not copied
// from its description. The catalogue test and the benchmark both measure
// recall in the first five answers on these.

/** One query and the tool it should find. */
export interface CatalogQuery {
  readonly query: string;
  readonly expect: string;
}

export const REAL_SERVER_QUERIES: readonly CatalogQuery[] = [
  { query: "show me what is inside a text file", expect: "fs__read_text_file" },
  { query: "read the first 20 lines of a log", expect: "fs__read_text_file" },
  { query: "open several files at once", expect: "fs__read_multiple_files" },
  {
    query: "compare the contents of two files",
    expect: "fs__read_multiple_files",
  },
  { query: "view a png image file", expect: "fs__read_media_file" },
  { query: "get an audio file as base64", expect: "fs__read_media_file" },
  { query: "save text to a new file", expect: "fs__write_file" },
  { query: "overwrite a file with new content", expect: "fs__write_file" },
  {
    query: "change some lines in a source file and show a diff",
    expect: "fs__edit_file",
  },
  { query: "apply edits to a text file", expect: "fs__edit_file" },
  { query: "make a new folder", expect: "fs__create_directory" },
  { query: "create nested directories", expect: "fs__create_directory" },
  { query: "what files are in this folder", expect: "fs__list_directory" },
  { query: "list directory contents", expect: "fs__list_directory" },
  {
    query: "list files with their sizes sorted by size",
    expect: "fs__list_directory_with_sizes",
  },
  {
    query: "recursive tree of a project as JSON",
    expect: "fs__directory_tree",
  },
  { query: "directory tree", expect: "fs__directory_tree" },
  { query: "rename a file", expect: "fs__move_file" },
  { query: "move a file to another directory", expect: "fs__move_file" },
  {
    query: "find files matching a glob pattern like *.ts",
    expect: "fs__search_files",
  },
  { query: "search for files by name", expect: "fs__search_files" },
  { query: "when was a file last modified", expect: "fs__get_file_info" },
  { query: "file size and permissions metadata", expect: "fs__get_file_info" },
  {
    query: "which directories am I allowed to access",
    expect: "fs__list_allowed_directories",
  },
  { query: "allowed directories", expect: "fs__list_allowed_directories" },
  { query: "echo a message back", expect: "everything__echo" },
  { query: "repeat my input string", expect: "everything__echo" },
  { query: "add two numbers", expect: "everything__get-sum" },
  { query: "sum of a and b", expect: "everything__get-sum" },
  { query: "get a small logo image", expect: "everything__get-tiny-image" },
  { query: "tiny image", expect: "everything__get-tiny-image" },
  {
    query: "print the environment variables of the server",
    expect: "everything__get-env",
  },
  {
    query: "debug the MCP server configuration env",
    expect: "everything__get-env",
  },
  {
    query: "message with annotations metadata",
    expect: "everything__get-annotated-message",
  },
  { query: "links to resources", expect: "everything__get-resource-links" },
  {
    query: "get a reference to one resource by id",
    expect: "everything__get-resource-reference",
  },
  {
    query: "structured content with an output schema",
    expect: "everything__get-structured-content",
  },
  {
    query: "weather for a location as structured data",
    expect: "everything__get-structured-content",
  },
  {
    query: "compress data with gzip",
    expect: "everything__gzip-file-as-resource",
  },
  {
    query: "turn simulated logging on or off",
    expect: "everything__toggle-simulated-logging",
  },
  {
    query: "enable resource subscription updates",
    expect: "everything__toggle-subscriber-updates",
  },
  {
    query: "start a long running operation with progress",
    expect: "everything__trigger-long-running-operation",
  },
  {
    query: "run a deep research query on a topic",
    expect: "everything__simulate-research-query",
  },
  {
    query: "research a topic and synthesize findings",
    expect: "everything__simulate-research-query",
  },
];
