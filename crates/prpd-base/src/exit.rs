//! Named process exit codes, so that every way prpd ends maps to one documented number
//! (DESIGN §11) and scripts can branch on the outcome without parsing output.

/// How a prpd command ended, from the caller's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// The command succeeded: QA approved, the run shipped, the query answered.
    Success,
    /// QA rejected the work, or the run ended without shipping (aborted).
    NotShipped,
    /// The user's to fix, and nothing was run: the command line, a configuration file, a
    /// prompt override, the PRP, a directory outside any git repository, an agent CLI that is
    /// not installed, a run record this prpd cannot read, or a request that does not fit the
    /// run's state (resume a finished run, start a second one).
    UsageOrConfig,
    /// The run stopped and needs a human: a breaker opened, a guardrail was reached, or the
    /// third QA rejection.
    Escalated,
    /// prpd itself failed (I/O, a bug); the state on disk is still consistent.
    Internal,
}

impl ExitCode {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        match self {
            ExitCode::Success => 0,
            ExitCode::NotShipped => 1,
            ExitCode::UsageOrConfig => 2,
            ExitCode::Escalated => 3,
            ExitCode::Internal => 4,
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.code())
    }
}
