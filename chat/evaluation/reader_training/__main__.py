from chat.evaluation.reader_training.train import main

main()
