//! What publishing to crates.io needs and `cargo package --no-verify` does not check: every
//! file a crate embeds at compile time lies inside that crate (a published crate holds only
//! its own folder; nudt-gen once embedded templates from outside it and failed to build from
//! the registry), and every manifest carries the fields crates.io and docs.rs show.

use std::path::{Path, PathBuf};

/// The workspace's crates: folder and name.
const CRATES: [(&str, &str); 5] = [
    (".", "nudt"),
    ("generator", "nudt-gen"),
    ("kernels", "nudt-kernels"),
    ("macros", "nudt-macros"),
    ("runtime", "nudt-runtime"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, skipping other crates' folders (those with a Cargo.toml).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.join("Cargo.toml").exists() && entry.file_name() != "target" {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals after `include_str!(`, `include_bytes!(` and `#[path = ` in `text`.
fn embedded(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for opener in ["include_str!(\"", "include_bytes!(\"", "#[path = \""] {
        for (at, _) in text.match_indices(opener) {
            let rest = &text[at + opener.len()..];
            found.push(rest[..rest.find('"').unwrap()].to_string());
        }
    }
    found
}

#[test]
fn every_crate_embeds_only_its_own_files() {
    for (dir, name) in CRATES {
        let krate = root().join(dir).canonicalize().unwrap();
        let mut files = Vec::new();
        sources(&krate, &mut files);
        assert!(!files.is_empty(), "{name}: no sources found");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for rel in embedded(&text) {
                let target = file.parent().unwrap().join(&rel);
                let target = target
                    .canonicalize()
                    .unwrap_or_else(|e| panic!("{}: {rel}: {e}", file.display()));
                assert!(
                    target.starts_with(&krate),
                    "{name}: {} embeds {rel}, outside the crate's folder {}",
                    file.display(),
                    krate.display()
                );
            }
        }
    }
}

#[test]
fn every_manifest_has_the_registry_fields() {
    for (dir, name) in CRATES {
        let manifest = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        let package = &manifest[manifest.find("[package]").unwrap()..];
        let package = &package[..package[1..].find("\n[").map_or(package.len(), |i| i + 1)];
        for field in [
            "description",
            "license",
            "repository",
            "documentation",
            "readme",
            "keywords",
            "categories",
            "rust-version",
        ] {
            assert!(
                package.contains(&format!("\n{field} = "))
                    || package.contains(&format!("\n{field}.workspace = true")),
                "{name}: [package] has no {field}"
            );
        }
        assert!(
            package.contains(&format!("\ndocumentation = \"https://docs.rs/{name}\"")),
            "{name}: documentation should be its docs.rs page"
        );
        assert!(
            root().join(dir).join("README.md").exists(),
            "{name}: no README.md"
        );
    }
}
