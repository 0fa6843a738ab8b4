#include "sim/dataset_info.h"

namespace gossipsim {

DatasetInfo published_dataset(const WorkloadSpec& w) {
  DatasetInfo d;
  if (w.dataset == DatasetKind::kFashionMnist) {
    d.train = 60000;
    d.test = 10000;
    d.classes = 10;
    d.sample_shape = {1, 28, 28};
  } else if (w.dataset == DatasetKind::kCifar100) {
    d.train = 50000;
    d.test = 10000;
    d.classes = w.coarse_labels ? 20 : 100;
    d.sample_shape = {3, 32, 32};
  } else if (w.dataset == DatasetKind::kTensors) {
    d.train = w.data_facts.train;
    d.test = w.data_facts.test;
    d.classes = w.data_facts.classes;
    d.sample_shape = w.data_facts.shape;
    d.integer_inputs = w.data_facts.integer_inputs;
    d.classes_from_labels = !w.data_facts.classes_given;
    d.largest_label_at = w.data_facts.largest_label_at;
  } else {
    d.train = w.synthetic.train;
    d.test = w.synthetic.test;
    d.classes = w.synthetic.classes;
    d.sample_shape = w.synthetic.shape;
  }
  return d;
}

}  // namespace gossipsim
