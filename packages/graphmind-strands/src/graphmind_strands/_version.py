__version__ = "0.1.0"
# The Strands Agents releases this adapter's hooks were read in (docs/strands.md): 1.62 is the first
# read, with the middleware stages (`InvokeModelStage`, `ExecuteToolStage`) every call goes through.
SUPPORTED = "strands-agents>=1.62,<2"
