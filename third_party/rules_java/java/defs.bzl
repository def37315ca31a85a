"""Re-exports Bazel's native Java rules under the names @rules_java provides."""

java_binary = native.java_binary
java_import = native.java_import
java_library = native.java_library
java_plugin = native.java_plugin
java_runtime = native.java_runtime
java_test = native.java_test
java_toolchain = native.java_toolchain
