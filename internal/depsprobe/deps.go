package depsprobe

import (
	_ "github.com/apache/arrow-go/v18/arrow/array"
	_ "github.com/apache/arrow-go/v18/arrow/compute"
	_ "github.com/chzyer/readline"
	_ "github.com/cockroachdb/datadriven"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/pingcap/tidb/pkg/parser"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/twmb/franz-go/pkg/kfake"
)
