package fake

func labels(p interface{ GetLabelsForVolume() }) { p.GetLabelsForVolume() }
