{
  "targets": [
    {
      "target_name": "pocketsphinx",
      "sources": ["src/addon.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(pkg-config --cflags-only-I pocketsphinx sphinxbase | sed -e 's/-I//g')"
      ],
      "libraries": [
        "<!@(pkg-config --libs-only-L pocketsphinx sphinxbase)",
        "-lpocketsphinx",
        "-lsphinxbase"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
