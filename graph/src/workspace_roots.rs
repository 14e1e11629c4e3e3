//! Which folders of the server a coding module may start from. The operator
//! lists the allowed roots (`--workspace-roots`); a module's
//! `workspace.path` must lie inside one of them. This is the lexical rule
//! validation applies in the browser and on the server; the run applies it
//! again to the paths with their links resolved, so a link out of a root
//! does not get through.

/// Why a `workspace.path` is not allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkspacePathProblem {
    /// The server allows no folder at all.
    NoRoots,
    /// Not an absolute path (`/…`).
    NotAbsolute,
    /// Inside none of the roots (the path as normalised).
    OutsideRoots(String),
}

impl WorkspacePathProblem {
    /// The problem in words, for a finding or a run error.
    pub fn describe(&self, path: &str, roots: &[String]) -> String {
        match self {
            WorkspacePathProblem::NoRoots => format!(
                "workspace folder \"{path}\" is not allowed: this server lets no graph name a folder of its own (the operator can allow some with --workspace-roots); leave the path empty for a fresh repository"
            ),
            WorkspacePathProblem::NotAbsolute => {
                format!("workspace folder \"{path}\" must be an absolute path (starting with /)")
            }
            WorkspacePathProblem::OutsideRoots(normalised) => format!(
                "workspace folder \"{normalised}\" is outside the folders this server allows ({})",
                roots.join(", ")
            ),
        }
    }
}

/// `path` with `.` and `..` worked out and repeated slashes dropped, as
/// components; `None` if it is not absolute. `..` above `/` stays at `/`,
/// as the kernel does.
pub fn normalise(path: &str) -> Option<Vec<&str>> {
    if !path.starts_with('/') {
        return None;
    }
    let mut components: Vec<&str> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                components.pop();
            }
            name => components.push(name),
        }
    }
    Some(components)
}

fn joined(components: &[&str]) -> String {
    format!("/{}", components.join("/"))
}

/// Checks `path` against `roots`; gives the normalised path when it is
/// inside one of them (a root itself counts as inside).
pub fn check(path: &str, roots: &[String]) -> Result<String, WorkspacePathProblem> {
    if roots.is_empty() {
        return Err(WorkspacePathProblem::NoRoots);
    }
    let components = normalise(path.trim()).ok_or(WorkspacePathProblem::NotAbsolute)?;
    let inside = roots.iter().any(|root| {
        normalise(root).is_some_and(|root| {
            root.len() <= components.len() && components.iter().zip(&root).all(|(a, b)| a == b)
        })
    });
    if inside {
        Ok(joined(&components))
    } else {
        Err(WorkspacePathProblem::OutsideRoots(joined(&components)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Vec<String> {
        vec!["/srv/projects".to_owned(), "/home/ada/code/".to_owned()]
    }

    #[test]
    fn paths_inside_a_root_are_allowed_and_normalised() {
        assert_eq!(
            check("/srv/projects/app", &roots()),
            Ok("/srv/projects/app".to_owned())
        );
        assert_eq!(
            check("/srv/projects", &roots()),
            Ok("/srv/projects".to_owned())
        );
        assert_eq!(
            check("//home/ada/code/./x//y/../z", &roots()),
            Ok("/home/ada/code/x/z".to_owned())
        );
    }

    #[test]
    fn everything_else_is_refused() {
        assert_eq!(
            check("/etc", &roots()),
            Err(WorkspacePathProblem::OutsideRoots("/etc".to_owned()))
        );
        assert_eq!(
            check("/srv/projects/../../etc", &roots()),
            Err(WorkspacePathProblem::OutsideRoots("/etc".to_owned()))
        );
        // A sibling whose name starts like a root is not inside it.
        assert_eq!(
            check("/srv/projects-old/app", &roots()),
            Err(WorkspacePathProblem::OutsideRoots(
                "/srv/projects-old/app".to_owned()
            ))
        );
        assert_eq!(
            check("projects/app", &roots()),
            Err(WorkspacePathProblem::NotAbsolute)
        );
        assert_eq!(
            check("/srv/projects", &[]),
            Err(WorkspacePathProblem::NoRoots)
        );
    }
}
